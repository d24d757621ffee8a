#include "profiles/compiled_rules.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <exception>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "profiles/file_trust.hpp"
#include "profiles/profile_toml.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace autotune::profiles {

using nccl::algorithm_from_id;
using nccl::collective_from_id;
using nccl::protocol_from_id;
namespace {

constexpr uint32_t kByteOrderMark = 0x01020304;
constexpr uint32_t kNodesPresent = 1, kRanksPresent = 2, kPipeOpsPresent = 4;

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

// Reads a T at `offset`; the caller has checked the length. memcpy: the bytes need not be aligned.
template <typename T>
T get(std::string_view in, size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

// Whether the line starting at `pos` is a [[rule]] header: "[[", optional blanks, "rule", optional blanks,
// "]]". A quoted spelling ([["rule"]]) is not recognised; compile_rules then finds rules in the head and
// refuses, so a miss here costs the speed-up, never correctness.
bool is_rule_header(std::string_view text, size_t pos) {
  auto skip_blanks = [&](size_t p) {
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
    return p;
  };
  pos = skip_blanks(pos);
  if (text.substr(pos, 2) != "[[") return false;
  pos = skip_blanks(pos + 2);
  if (text.substr(pos, 4) != "rule") return false;
  pos = skip_blanks(pos + 4);
  return text.substr(pos, 2) == "]]";
}

size_t find_head_length(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (is_rule_header(text, pos)) return pos;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return text.size();
}

uint64_t digest(std::string_view text) {
  return XXH3_64bits(text.data(), text.size());
}

// Reads a whole regular file; false on any failure (the caller then does without it).
bool read_regular_file(const std::string& path, std::string& out) {
  // O_NONBLOCK: a FIFO planted under the name must not hang a communicator's init.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  out.clear();
  out.reserve(static_cast<size_t>(st.st_size));
  return read_all(fd, out) == 0;
}

Profile without_rules(const Profile& p) {
  Profile out = p;
  out.rules.clear();
  return out;
}

}  // namespace

std::filesystem::path compiled_rules_path(const std::filesystem::path& profile_path) {
  std::filesystem::path out = profile_path;
  out += ".rules";
  return out;
}

std::string compile_rules(const Profile& profile, std::string_view toml_text, std::string_view file_name) {
  const size_t head_length = find_head_length(toml_text);
  // The reader trusts the head parse to give everything but the rules: prove it here, once, where a failure
  // is cheap. format_profile writes every field of a profile but its source lines, so equal text is an
  // equal profile.
  Profile head = parse_profile(toml_text.substr(0, head_length), file_name);
  if (!head.rules.empty() || format_profile(head) != format_profile(without_rules(profile)))
    throw InputError(
        std::string(file_name), 0,
        "expected every table other than [[rule]] before the first [[rule]] (so the rules can be "
        "compiled); found other settings after it");

  std::string out;
  out.reserve(kCompiledRulesHeaderSize + profile.rules.size() * kCompiledRulesRecordSize);
  out.append(kCompiledRulesMagic);
  put<uint32_t>(out, kCompiledRulesVersion);
  put<uint32_t>(out, kByteOrderMark);
  put<uint64_t>(out, toml_text.size());
  put<uint64_t>(out, digest(toml_text));
  put<uint64_t>(out, head_length);
  put<uint64_t>(out, profile.rules.size());
  put<uint32_t>(out, kCompiledRulesRecordSize);
  put<uint32_t>(out, 0);
  for (const Rule& r : profile.rules) {
    put<uint64_t>(out, r.min_bytes);
    put<uint64_t>(out, r.max_bytes);
    put<int32_t>(out, static_cast<int32_t>(r.collective));
    put<int32_t>(out, static_cast<int32_t>(r.algorithm));
    put<int32_t>(out, static_cast<int32_t>(r.protocol));
    put<int32_t>(out, r.channels);
    put<int32_t>(out, r.nodes ? r.nodes->min : 0);
    put<int32_t>(out, r.nodes ? r.nodes->max : 0);
    put<int32_t>(out, r.ranks ? r.ranks->min : 0);
    put<int32_t>(out, r.ranks ? r.ranks->max : 0);
    put<uint32_t>(out, (r.nodes ? kNodesPresent : 0) | (r.ranks ? kRanksPresent : 0) |
                           (r.pipe_ops ? kPipeOpsPresent : 0));
    put<int32_t>(out, r.pipe_ops ? r.pipe_ops->min : 0);
    put<int32_t>(out, r.pipe_ops ? r.pipe_ops->max : 0);
    put<int32_t>(out, r.reg_buff ? (*r.reg_buff ? 1 : 0) : -1);
    put<uint64_t>(out, r.chunk_bytes);
    put<uint64_t>(out, 0);
  }
  return out;
}

std::optional<Profile> read_with_compiled_rules(std::string_view toml_text, std::string_view bytes,
                                                const std::string& file_name) {
  constexpr size_t H = kCompiledRulesHeaderSize, R = kCompiledRulesRecordSize;
  if (bytes.size() < H || bytes.substr(0, 8) != kCompiledRulesMagic) return std::nullopt;
  if (get<uint32_t>(bytes, 8) != kCompiledRulesVersion || get<uint32_t>(bytes, 12) != kByteOrderMark ||
      get<uint32_t>(bytes, 48) != R || get<uint32_t>(bytes, 52) != 0)
    return std::nullopt;
  const uint64_t size = get<uint64_t>(bytes, 16), head_length = get<uint64_t>(bytes, 32),
                 count = get<uint64_t>(bytes, 40);
  if (size != toml_text.size() || head_length > size) return std::nullopt;
  // Division, not count * R: a forged count must not wrap around to the right length.
  if ((bytes.size() - H) % R != 0 || (bytes.size() - H) / R != count) return std::nullopt;
  // The head must end where a [[rule]] line starts (or be the whole text), as the writer made it.
  if (head_length < size &&
      ((head_length > 0 && toml_text[head_length - 1] != '\n') || !is_rule_header(toml_text, head_length)))
    return std::nullopt;
  // A [[rule]] header begins at least one rule; no header, no rules.
  if ((head_length < size) != (count > 0)) return std::nullopt;
  if (get<uint64_t>(bytes, 24) != digest(toml_text)) return std::nullopt;

  std::vector<Rule> rules;
  rules.reserve(count);
  for (size_t i = 0, at = H; i < count; ++i, at += R) {
    Rule r;
    r.min_bytes = get<uint64_t>(bytes, at);
    r.max_bytes = get<uint64_t>(bytes, at + 8);
    auto collective = collective_from_id(get<int32_t>(bytes, at + 16));
    auto algorithm = algorithm_from_id(get<int32_t>(bytes, at + 20));
    auto protocol = protocol_from_id(get<int32_t>(bytes, at + 24));
    if (!collective || !algorithm || !protocol) return std::nullopt;
    r.collective = *collective;
    r.algorithm = *algorithm;
    r.protocol = *protocol;
    r.channels = get<int32_t>(bytes, at + 28);
    const int32_t nodes_min = get<int32_t>(bytes, at + 32), nodes_max = get<int32_t>(bytes, at + 36),
                  ranks_min = get<int32_t>(bytes, at + 40), ranks_max = get<int32_t>(bytes, at + 44);
    const uint32_t flags = get<uint32_t>(bytes, at + 48);
    const int32_t pipe_min = get<int32_t>(bytes, at + 52), pipe_max = get<int32_t>(bytes, at + 56),
                  reg_buff = get<int32_t>(bytes, at + 60);
    if ((flags & ~(kNodesPresent | kRanksPresent | kPipeOpsPresent)) != 0 ||
        get<uint64_t>(bytes, at + 72) != 0 || reg_buff < -1 || reg_buff > 1)
      return std::nullopt;
    if (flags & kPipeOpsPresent)
      r.pipe_ops = CountRange{pipe_min, pipe_max};
    else if (pipe_min != 0 || pipe_max != 0)
      return std::nullopt;
    if (reg_buff >= 0) r.reg_buff = reg_buff == 1;
    r.chunk_bytes = get<uint64_t>(bytes, at + 64);
    // One encoding per rule: an absent range is stored as zeros.
    if (flags & kNodesPresent)
      r.nodes = CountRange{nodes_min, nodes_max};
    else if (nodes_min != 0 || nodes_max != 0)
      return std::nullopt;
    if (flags & kRanksPresent)
      r.ranks = CountRange{ranks_min, ranks_max};
    else if (ranks_min != 0 || ranks_max != 0)
      return std::nullopt;
    rules.push_back(r);
  }

  try {
    Profile profile = parse_profile(toml_text.substr(0, head_length), file_name);
    if (!profile.rules.empty()) return std::nullopt;
    profile.rules = std::move(rules);
    // The rules of a rule (names NCCL allows together, ranges, channels, counts) and no overlaps: a cache
    // that passed the digest but was written by a faulty tool must not steer NCCL.
    validate_profile(profile, file_name);
    return profile;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<Profile> read_with_trusted_compiled_rules(const std::string& profile_path,
                                                        std::string_view text) {
  const std::string path = compiled_rules_path(profile_path).string();
  if (::access(path.c_str(), F_OK) != 0) return std::nullopt;
  if (!insecure_allowed() && untrusted_reason(path)) return std::nullopt;
  std::string bytes;
  if (!read_regular_file(path, bytes)) return std::nullopt;
  return read_with_compiled_rules(text, bytes, profile_path);
}

Profile read_profile_for_use(const std::filesystem::path& profile_path) {
  const std::string text = read_file(profile_path);
  if (auto compiled = read_with_trusted_compiled_rules(profile_path.string(), text))
    return std::move(*compiled);
  return parse_profile(text, profile_path.string());
}

void write_compiled_rules(const std::filesystem::path& profile_path, const Profile& profile,
                          std::string_view toml_text) {
  write_file_atomically(compiled_rules_path(profile_path),
                        compile_rules(profile, toml_text, profile_path.string()));
}

}  // namespace autotune::profiles
