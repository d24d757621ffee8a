#pragma once
// A profile file as the plugin reads it, for the plugin and for the tools that must see what it sees
// (`explain`): a TOML profile (with its compiled rules when they belong to the text), or the CSV of NCCL's
// example tuner plugin, told apart by content. Thread-safe (pure functions but for reading the .rules file).

#include <string>
#include <string_view>
#include <vector>

#include "profiles/nccl_csv.hpp"
#include "profiles/profile.hpp"

namespace autotune::profiles {

// A CSV line of NCCL's example plugin starts with a collective name and a comma; a TOML profile's first
// meaningful line is a [table] or a key = value.
bool looks_like_nccl_csv(std::string_view text);

struct ProfileRead {
  Profile profile;
  std::string format;               // "TOML", "TOML, compiled rules" or "CSV"
  std::vector<CsvSkipped> skipped;  // CSV lines that are not used, with why
};

// `text` is what `path` held. TOML is read strictly (InputError for anything wrong, naming the line); with
// `use_compiled`, <path>.rules is used when it is trusted and bound to `text` (compiled_rules.hpp). A CSV
// file never throws: its rules are not validated as a profile's (overlapping lines are legal there, the first
// match wins, and a line NCCL cannot run never applies), and lines it cannot use are listed in `skipped`.
ProfileRead read_any_profile(const std::string& path, const std::string& text, bool use_compiled = true);

}  // namespace autotune::profiles
