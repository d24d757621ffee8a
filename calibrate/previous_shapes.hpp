#pragma once
// A recalibration and the rules the store's current version holds for shapes it does not measure now. A job
// of several communicators is often calibrated a shape at a time (the data parallel groups one night, the
// tensor groups the next): `tune --add-shapes` keeps the current version's rules of every shape not
// measured now and replaces those of the shapes measured (profiles/profile_merge.hpp decides what may join:
// the same kind of node, NCCL major.minor, source, [env] and constants). Without it the new version holds
// only what was measured now, and the notes say which rules of other shapes it no longer has (the old
// version stays readable in the store's versions/). Pure but for reading the current version.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profiles/profile.hpp"
#include "runners/process_setting.hpp"
#include "search/journal.hpp"

namespace autotune::calibrate {

struct PreviousVersion {
  std::filesystem::path file;
  profiles::Profile profile;
};

// The store's current version of the profile this calibration will write, if there is a valid one. With
// --add-shapes (`keep`), one that cannot be read, or was made for another kind of node, NCCL major.minor or
// source than `header` says, is refused now, before anything is measured (InputError, exit status 2);
// without, such a version is simply replaced.
std::optional<PreviousVersion> current_version(const std::filesystem::path& store,
                                               const search::JournalHeader& header, bool keep);

// Joins (keep) or names (not keep) the previous version's rules of shapes not in `measured`; notes say what
// was kept or dropped. Throws InputError naming both files when the previous rules cannot join.
void carry_previous_shapes(profiles::Profile& fresh, const PreviousVersion& previous,
                           const std::vector<runners::Scale>& measured, bool keep,
                           std::vector<std::string>& notes);

}  // namespace autotune::calibrate
