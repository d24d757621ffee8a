// Fuzzes the compiled-rules reader (profiles/compiled_rules.hpp), which the plugin runs on a file beside the
// profile. The first input byte picks what the rest is, modulo 3:
//   0: cache bytes, read against a fixed small profile text;
//   1: a mask XOR-ed over the valid cache of that text (then truncated or extended to the mask's length), so
//      that inputs get past the digest into the record and head checks;
//   2: a TOML text and cache bytes, split at the first NUL; when the text is a profile that compiles, its own
//      cache must read back to the same rules and head.
// Any result must be a profile that validates; any exception, crash or sanitizer report is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/input_error.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"

namespace {

using namespace autotune::profiles;

const std::string& fixed_text() {
  static const std::string text = R"(schema = 1

[cluster]
name = "fuzz"
fingerprint = ""
gpu_model = "H100"
gpus_per_node = 8
nodes = 2
nics_per_node = 8

[provenance]
created = "2026-01-01T00:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "measured"
command = ""

[env]

[policy]
uncalibrated = "nccl"

[[rule]]
collective = "allreduce"
min_bytes = 0
max_bytes = 65535
algorithm = "tree"
protocol = "ll"
channels = 4
nodes = "1"
ranks = "1-8"

[[rule]]
collective = "allgather"
min_bytes = 1024
max_bytes = 4096
algorithm = "pat"
protocol = "simple"
channels = 0

[[rule]]
collective = "reducescatter"
min_bytes = 0
max_bytes = 1000
algorithm = "ring"
protocol = "ll128"
channels = 64
ranks = "16"
)";
  return text;
}

const std::string& fixed_cache() {
  static const std::string bytes =
      compile_rules(parse_profile(fixed_text(), "fixed.toml"), fixed_text(), "fixed.toml");
  return bytes;
}

[[noreturn]] void bug(const char* what, std::string_view text) {
  std::fprintf(stderr, "%s\n%.*s\n", what, static_cast<int>(text.size()), text.data());
  std::abort();
}

// Whatever the reader accepts must be a profile the tool itself would accept.
void check_read(std::string_view text, std::string_view bytes) {
  auto got = read_with_compiled_rules(text, bytes, "fuzz.toml");
  if (!got) return;
  try {
    validate_profile(*got, "fuzz.toml");
  } catch (const autotune::InputError& e) {
    bug(e.what(), text);
  }
}

bool same_rules(const std::vector<Rule>& a, const std::vector<Rule>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].collective != b[i].collective || a[i].min_bytes != b[i].min_bytes ||
        a[i].max_bytes != b[i].max_bytes || a[i].algorithm != b[i].algorithm ||
        a[i].protocol != b[i].protocol || a[i].channels != b[i].channels || a[i].nodes != b[i].nodes ||
        a[i].ranks != b[i].ranks)
      return false;
  return true;
}

// A text that parses and compiles must read back from its own cache exactly as parsing gives it.
void check_round_trip(std::string_view text) {
  Profile parsed;
  std::string bytes;
  try {
    parsed = parse_profile(text, "fuzz.toml");
    bytes = compile_rules(parsed, text, "fuzz.toml");
  } catch (const autotune::InputError&) {
    return;
  }
  auto got = read_with_compiled_rules(text, bytes, "fuzz.toml");
  if (!got) bug("a compiled profile does not read back from its own cache", text);
  if (!same_rules(got->rules, parsed.rules)) bug("compiled rules differ from the parsed ones", text);
  Profile head = parsed;
  head.rules.clear();
  Profile got_head = *got;
  got_head.rules.clear();
  if (format_profile(head) != format_profile(got_head)) bug("the head differs from the parsed profile", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      check_read(fixed_text(), rest);
      break;
    case 1: {
      std::string bytes = fixed_cache();
      bytes.resize(rest.size(), '\0');
      for (size_t i = 0; i < rest.size(); ++i) bytes[i] = static_cast<char>(bytes[i] ^ rest[i]);
      check_read(fixed_text(), bytes);
      break;
    }
    default: {
      const size_t nul = rest.find('\0');
      const std::string_view text = rest.substr(0, nul);
      const std::string_view bytes =
          nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
      check_read(text, bytes);
      check_round_trip(text);
      break;
    }
  }
  return 0;
}
