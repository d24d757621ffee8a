// Fuzzes the values a profile's [env] may carry: NCCL_ALGO, NCCL_PROTO, NCCL_IB_HCA (parse, and
// parse(format(x))
// == x) and the env policy itself (check_env_entry on any key and value). The first byte picks the parser;
// for the policy the input is "KEY=VALUE". An accepted entry must be one `nccl-autotune env` can print inside
// quotes without any escaping: an allowlisted NCCL_* key that loads no code, a value of letters, digits and
// the punctuation NCCL's syntaxes use (no control characters, spaces, quotes, `$`, backslashes). The checks
// below restate that rule independently of env_policy.cpp.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/input_error.hpp"
#include "nccl/algo_proto_spec.hpp"
#include "nccl/env_policy.hpp"
#include "nccl/ib_hca_spec.hpp"
#include "nccl/socket_ifname_spec.hpp"

namespace {

using namespace autotune::profiles;
using namespace autotune::nccl;

[[noreturn]] void fail(const char* what, std::string_view key, std::string_view value) {
  std::fprintf(stderr, "%s: key \"%.*s\" value \"%.*s\"\n", what, static_cast<int>(key.size()), key.data(),
               static_cast<int>(value.size()), value.data());
  std::abort();
}

template <typename Parse, typename Format>
void round_trip(std::string_view text, Parse parse, Format format, const char* what) {
  try {
    auto spec = parse(text);
    const std::string formatted = format(spec);
    if (parse(formatted) != spec) fail("parse(format(x)) != x", what, text);
    if (format(parse(formatted)) != formatted) fail("format is not stable", what, formatted);
  } catch (const autotune::InputError&) {
  }
}

bool shell_safe(std::string_view value) {
  for (unsigned char c : value) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("_-.,:;=^+/%@").find(static_cast<char>(c)) != std::string_view::npos;
    if (!plain) return false;
  }
  return true;
}

void policy(std::string_view input) {
  const size_t eq = input.find('=');
  if (eq == std::string_view::npos) return;
  const std::string_view key = input.substr(0, eq);
  const std::string_view value = input.substr(eq + 1);
  try {
    check_env_entry(key, value);
  } catch (const autotune::InputError&) {
    return;
  }
  if (!is_allowed_env_key(key)) fail("accepted a key that is not on the allowlist", key, value);
  if (key.substr(0, 3) == "LD_" || key.find("PLUGIN") != std::string_view::npos)
    fail("accepted a key that loads code", key, value);
  if (key.substr(0, 5) != "NCCL_") fail("accepted a key outside NCCL_*", key, value);
  if (!shell_safe(value)) fail("accepted a value a shell would interpret", key, value);
  if (value.size() > 1024) fail("accepted an over-long value", key, value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      round_trip(text, parse_algo_spec, format_algo_spec, "NCCL_ALGO");
      break;
    case 1:
      round_trip(text, parse_proto_spec, format_proto_spec, "NCCL_PROTO");
      break;
    case 2:
      round_trip(text, parse_ib_hca_spec, format_ib_hca_spec, "NCCL_IB_HCA");
      try {
        const IbHcaSpec spec = parse_ib_hca_spec(text);
        (void)spec.selects("mlx5_0", 1);
        (void)spec.selects("", 0);
      } catch (const autotune::InputError&) {
      }
      break;
    case 3:
      round_trip(text, parse_socket_ifname_spec, format_socket_ifname_spec, "NCCL_SOCKET_IFNAME");
      break;
    default:
      policy(text);
      break;
  }
  return 0;
}
