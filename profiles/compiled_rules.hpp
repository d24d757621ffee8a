#pragma once
// Compiled rules: a binary copy of a profile's [[rule]] tables, stored beside the TOML as <profile>.rules, so
// that the plugin's cold init does not pay toml++'s parse of thousands of rule tables (86% of a 10,000-rule
// cold init). The copy is a cache, never a source of truth: it names the exact TOML text it was compiled from
// (size and XXH3-64 digest) and is used only when that text is the one just read; anything else, and the
// TOML is parsed as usual. Thread-safe (pure functions).
//
// Layout, host byte order (a magic, a version and a byte-order mark refuse files from elsewhere):
//   header (56 bytes): "ATRULES1", u32 version, u32 byte-order mark 0x01020304, u64 TOML size,
//     u64 XXH3-64 of the TOML text, u64 head_length (offset of the first [[rule]] header line; the text
//     before it is the whole profile but its rules), u64 rule count, u32 record size, u32 zero;
//   then one 80-byte record per rule, in file order: u64 min_bytes, u64 max_bytes, i32 collective, algorithm,
//     protocol, channels (NCCL's ids), i32 nodes min, max, ranks min, max (zero when absent), u32 flags (bit
//     0: nodes present, bit 1: ranks present, bit 2: pipe_ops present, bit 3: ranks_per_node present), i32
//     pipe_ops min, max (zero when absent), i32 reg_buff (-1 absent, 0 false, 1 true), u64 chunk_bytes, i32
//     ranks_per_node min, max (zero when absent). Format 3; format 2 had a u64 zero where ranks_per_node is.
// Version 1 (56-byte records without the per-call conditions and the chunk size) is no longer read: such a
// file is stale, and the TOML is parsed until the store or `profile compile` writes it again.
// The calibration evidence (busbw, samples) is not kept: the plugin does not use it.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "profiles/profile.hpp"

namespace autotune::profiles {

inline constexpr std::string_view kCompiledRulesMagic = "ATRULES1";
inline constexpr uint32_t kCompiledRulesVersion = 3;
inline constexpr size_t kCompiledRulesHeaderSize = 56;
inline constexpr size_t kCompiledRulesRecordSize = 80;

// "<profile path>.rules"
std::filesystem::path compiled_rules_path(const std::filesystem::path& profile_path);

// The bytes of the compiled form of `profile`, which must be parse_profile(toml_text) (rules in file order).
// Throws InputError when the text cannot be split exactly into a head and the rules: the head (the text
// before the first [[rule]] line) must parse to the same profile minus its rules, which fails when a
// hand-written file puts another table after its first [[rule]].
std::string compile_rules(const Profile& profile, std::string_view toml_text, std::string_view file_name);

// The profile `toml_text` holds, built from its head (parsed with parse_profile) and the compiled records;
// rules have source_line 0 and no evidence. nullopt, never an exception, unless everything checks: magic,
// version, byte order, record size, the TOML's size and digest, head_length <= size and at a [[rule]] line,
// the record count against the byte length, every record by validate_profile's rules (and no overlaps).
std::optional<Profile> read_with_compiled_rules(std::string_view toml_text, std::string_view compiled_bytes,
                                                const std::string& file_name);

// The profile at `profile_path`, whose TOML text is `text`, from <profile_path>.rules when that file is a
// regular file trusted as a profile is (file_trust.hpp; NCCL_AUTOTUNE_INSECURE=1 skips the check) and is
// bound to exactly `text`; nullopt otherwise, silently (a missing or stale cache is normal), and the caller
// parses the TOML. Never throws for a bad cache; never blocks on a FIFO planted under the name.
std::optional<Profile> read_with_trusted_compiled_rules(const std::string& profile_path,
                                                        std::string_view text);

// The same for a profile whose TOML is open as `toml_fd` (a regular file of `toml_size` bytes, as its fstat
// said): for the plugin's cold start, which pays for every fresh page it touches, the text is streamed
// through a small buffer (its digest taken, its head kept) and the records are read a chunk at a time, so
// neither file is ever held whole. Reads with pread: the descriptor's offset is left alone.
std::optional<Profile> read_with_trusted_compiled_rules(const std::string& profile_path, int toml_fd,
                                                        uint64_t toml_size, uint64_t* text_digest = nullptr);

// A profile's identity: the XXH3-64 digest of its exact text (what the compiled rules are bound to, what the
// launcher pins a job to and the plugin checks), and its 16-hex-digit form.
uint64_t profile_digest(std::string_view text);
std::string digest_text(uint64_t digest);
// digest_text(profile_digest(the file's text)); throws InputError when the file cannot be read.
std::string file_digest_text(const std::filesystem::path& profile_file);

// For the tool's own use of a profile (the launcher): read_profile's result, from the compiled rules when
// they belong to the file. Rules then carry no evidence (busbw, samples) and no source lines. Throws as
// read_profile does when the TOML itself is bad.
Profile read_profile_for_use(const std::filesystem::path& profile_path);

// Writes compile_rules(...) beside `profile_path` atomically. Throws as compile_rules and
// write_file_atomically do.
void write_compiled_rules(const std::filesystem::path& profile_path, const Profile& profile,
                          std::string_view toml_text);

}  // namespace autotune::profiles
