#pragma once
// The profile file (schema 1, TOML): reading with full validation, and writing in one canonical layout so
// that format(parse(format(p))) == format(p) byte for byte. Every error is an InputError naming the file, the
// line and the key ("profile.toml:12: rule[3].algorithm: expected one of ...; found \"rign\""); rule[N]
// counts from 1 in file order. The format is described in docs/profiles.md.

#include <filesystem>
#include <string>
#include <string_view>

#include "profiles/profile.hpp"

namespace autotune::profiles {

Profile read_profile(const std::filesystem::path& path);
Profile parse_profile(std::string_view text, std::string_view file_name);

// The checks that do not depend on TOML: names NCCL allows together, ranges, overlaps, [env] policy,
// constants. parse_profile runs them; call it on a profile built in code before writing it.
void validate_profile(const Profile& profile, std::string_view file_name);

// Canonical text: fixed key order, rules sorted by collective, scale (nodes, ranks; any first), min_bytes.
std::string format_profile(const Profile& profile);
// Validates, then writes atomically (write_file_atomically): readers see the old file or the new one.
void write_profile(const std::filesystem::path& path, const Profile& profile);

// Whether one call could match both rules: the same collective, intersecting byte ranges, nodes, ranks and
// ranks per node, and per-call conditions (pipe_ops, reg_buff) that can hold together.
bool rules_overlap(const Rule& a, const Rule& b);
// A rule's scope for messages: "512K..1M, nodes 2, ranks 16, ranks_per_node 8".
std::string describe_rule(const Rule& rule);

// "2-8", "4", or "any" for an absent range.
std::string format_count_range(const std::optional<CountRange>& range);

}  // namespace autotune::profiles
