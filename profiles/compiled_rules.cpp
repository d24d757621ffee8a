#include "profiles/compiled_rules.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "profiles/file_trust.hpp"
#include "profiles/profile_toml.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace autotune::profiles {

namespace {

constexpr uint32_t kByteOrderMark = 0x01020304;
constexpr uint32_t kNodesPresent = 1, kRanksPresent = 2, kPipeOpsPresent = 4, kRanksPerNodePresent = 8;

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
                           (r.pipe_ops ? kPipeOpsPresent : 0) |
                           (r.ranks_per_node ? kRanksPerNodePresent : 0));
    put<int32_t>(out, r.pipe_ops ? r.pipe_ops->min : 0);
    put<int32_t>(out, r.pipe_ops ? r.pipe_ops->max : 0);
    put<int32_t>(out, r.reg_buff ? (*r.reg_buff ? 1 : 0) : -1);
    put<uint64_t>(out, r.chunk_bytes);
    put<int32_t>(out, r.ranks_per_node ? r.ranks_per_node->min : 0);
    put<int32_t>(out, r.ranks_per_node ? r.ranks_per_node->max : 0);
  }
  return out;
}

namespace {

struct Header {
  uint64_t head_length = 0, count = 0, digest = 0;
};

// The header's own checks, against the TOML's size and the .rules file's length.
std::optional<Header> check_header(std::string_view h, uint64_t toml_size, uint64_t file_size) {
  constexpr size_t H = kCompiledRulesHeaderSize, R = kCompiledRulesRecordSize;
  if (h.size() < H || file_size < H || h.substr(0, 8) != kCompiledRulesMagic) return std::nullopt;
  if (get<uint32_t>(h, 8) != kCompiledRulesVersion || get<uint32_t>(h, 12) != kByteOrderMark ||
      get<uint32_t>(h, 48) != R || get<uint32_t>(h, 52) != 0)
    return std::nullopt;
  Header out{get<uint64_t>(h, 32), get<uint64_t>(h, 40), get<uint64_t>(h, 24)};
  if (get<uint64_t>(h, 16) != toml_size || out.head_length > toml_size) return std::nullopt;
  // Division, not count * R: a forged count must not wrap around to the right length.
  if ((file_size - H) % R != 0 || (file_size - H) / R != out.count) return std::nullopt;
  // A [[rule]] header begins at least one rule; no header, no rules.
  if ((out.head_length < toml_size) != (out.count > 0)) return std::nullopt;
  return out;
}

// The head must end where a [[rule]] line starts (or be the whole text), as the writer made it. `before` is
// the byte before head_length (when head_length > 0), `at` the text from head_length on (a prefix will do).
bool head_ends_at_rule(const Header& h, uint64_t toml_size, char before, std::string_view at) {
  if (h.head_length == toml_size) return true;
  return (h.head_length == 0 || before == '\n') && is_rule_header(at, 0);
}

// Decodes the record at `at` into `r` (a fresh Rule); false when it is not one the writer can have written.
bool decode_record(std::string_view bytes, size_t at, Rule& r) {
  const int32_t collective = get<int32_t>(bytes, at + 16), algorithm = get<int32_t>(bytes, at + 20),
                protocol = get<int32_t>(bytes, at + 24);
  // NCCL's ids are the enums' values (vocabulary.hpp); checked here rather than through *_from_id, which
  // this loop would call 30,000 times at 10,000 rules.
  if (static_cast<unsigned>(collective) >= static_cast<unsigned>(nccl::kNumCollectives) ||
      static_cast<unsigned>(algorithm) >= static_cast<unsigned>(nccl::kNumAlgorithms) ||
      static_cast<unsigned>(protocol) >= static_cast<unsigned>(nccl::kNumProtocols))
    return false;
  r.min_bytes = get<uint64_t>(bytes, at);
  r.max_bytes = get<uint64_t>(bytes, at + 8);
  r.collective = static_cast<nccl::Collective>(collective);
  r.algorithm = static_cast<nccl::Algorithm>(algorithm);
  r.protocol = static_cast<nccl::Protocol>(protocol);
  r.channels = get<int32_t>(bytes, at + 28);
  const int32_t nodes_min = get<int32_t>(bytes, at + 32), nodes_max = get<int32_t>(bytes, at + 36),
                ranks_min = get<int32_t>(bytes, at + 40), ranks_max = get<int32_t>(bytes, at + 44);
  const uint32_t flags = get<uint32_t>(bytes, at + 48);
  const int32_t pipe_min = get<int32_t>(bytes, at + 52), pipe_max = get<int32_t>(bytes, at + 56),
                reg_buff = get<int32_t>(bytes, at + 60);
  const int32_t per_node_min = get<int32_t>(bytes, at + 72), per_node_max = get<int32_t>(bytes, at + 76);
  if ((flags & ~(kNodesPresent | kRanksPresent | kPipeOpsPresent | kRanksPerNodePresent)) != 0 ||
      reg_buff < -1 || reg_buff > 1)
    return false;
  // One encoding per rule: an absent range is stored as zeros.
  auto range = [&](uint32_t bit, int32_t lo, int32_t hi, std::optional<CountRange>& out) {
    if (flags & bit) out = CountRange{lo, hi};
    return (flags & bit) || (lo == 0 && hi == 0);
  };
  if (!range(kNodesPresent, nodes_min, nodes_max, r.nodes) ||
      !range(kRanksPresent, ranks_min, ranks_max, r.ranks) ||
      !range(kPipeOpsPresent, pipe_min, pipe_max, r.pipe_ops) ||
      !range(kRanksPerNodePresent, per_node_min, per_node_max, r.ranks_per_node))
    return false;
  if (reg_buff >= 0) r.reg_buff = reg_buff == 1;
  r.chunk_bytes = get<uint64_t>(bytes, at + 64);
  return true;
}

// The profile from its head text and the decoded rules, if everything a TOML profile must be holds.
std::optional<Profile> finish(std::string_view head, std::vector<Rule> rules, const std::string& file_name) {
  try {
    Profile profile = parse_profile(head, file_name);
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

// Reads exactly `n` bytes at `offset`; false on any shortfall or error.
bool pread_exact(int fd, char* out, size_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got, n -= static_cast<size_t>(got), offset += static_cast<uint64_t>(got);
  }
  return true;
}

}  // namespace

std::optional<Profile> read_with_compiled_rules(std::string_view toml_text, std::string_view bytes,
                                                const std::string& file_name) {
  constexpr size_t H = kCompiledRulesHeaderSize, R = kCompiledRulesRecordSize;
  auto h = check_header(bytes, toml_text.size(), bytes.size());
  if (!h) return std::nullopt;
  if (!head_ends_at_rule(*h, toml_text.size(), h->head_length ? toml_text[h->head_length - 1] : '\n',
                         toml_text.substr(h->head_length)))
    return std::nullopt;
  if (h->digest != digest(toml_text)) return std::nullopt;
  std::vector<Rule> rules;
  rules.reserve(h->count);
  for (size_t i = 0, at = H; i < h->count; ++i, at += R)
    if (!decode_record(bytes, at, rules.emplace_back())) return std::nullopt;
  return finish(toml_text.substr(0, h->head_length), std::move(rules), file_name);
}

std::optional<Profile> read_with_trusted_compiled_rules(const std::string& profile_path, int toml_fd,
                                                        uint64_t toml_size, uint64_t* text_digest) {
  constexpr size_t H = kCompiledRulesHeaderSize, R = kCompiledRulesRecordSize;
  const std::string path = compiled_rules_path(profile_path).string();
  if (::access(path.c_str(), F_OK) != 0) return std::nullopt;
  if (!insecure_allowed() && untrusted_reason(path)) return std::nullopt;
  // O_NONBLOCK: a FIFO planted under the name must not hang a communicator's init.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  char header[H];
  if (!pread_exact(fd, header, H, 0)) return std::nullopt;
  auto h = check_header(std::string_view(header, H), toml_size, static_cast<uint64_t>(st.st_size));
  if (!h) return std::nullopt;

  // The TOML through a small buffer: its digest, its head, and what follows the head.
  constexpr size_t kChunk = 64 * 1024;
  std::string buffer(kChunk, '\0'), head, after;
  head.reserve(h->head_length);
  char before = '\n';
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  for (uint64_t at = 0; at < toml_size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, toml_size - at));
    if (!pread_exact(toml_fd, buffer.data(), n, at)) return std::nullopt;
    XXH3_64bits_update(&state, buffer.data(), n);
    if (at < h->head_length)
      head.append(buffer.data(), static_cast<size_t>(std::min<uint64_t>(n, h->head_length - at)));
    if (h->head_length > 0 && at < h->head_length && h->head_length <= at + n)
      before = buffer[h->head_length - 1 - at];
    if (after.size() < 64 && at + n > h->head_length) {
      const uint64_t from = std::max(at, h->head_length);
      after.append(buffer.data() + (from - at),
                   static_cast<size_t>(std::min<uint64_t>(at + n - from, 64 - after.size())));
    }
    at += n;
  }
  if (XXH3_64bits_digest(&state) != h->digest || !head_ends_at_rule(*h, toml_size, before, after))
    return std::nullopt;
  if (text_digest) *text_digest = h->digest;

  // The records, a chunk at a time, straight into the rules.
  std::vector<Rule> rules;
  rules.reserve(h->count);
  constexpr size_t kRecordsPerChunk = kChunk / R;
  for (uint64_t i = 0; i < h->count;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kRecordsPerChunk, h->count - i));
    if (!pread_exact(fd, buffer.data(), n * R, H + i * R)) return std::nullopt;
    const std::string_view chunk(buffer.data(), n * R);
    for (size_t k = 0; k < n; ++k)
      if (!decode_record(chunk, k * R, rules.emplace_back())) return std::nullopt;
    i += n;
  }
  return finish(head, std::move(rules), profile_path);
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

uint64_t profile_digest(std::string_view text) {
  return digest(text);
}

std::string file_digest_text(const std::filesystem::path& profile_file) {
  return digest_text(profile_digest(read_file(profile_file)));
}

std::string digest_text(uint64_t d) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(d));
  return out;
}

}  // namespace autotune::profiles
