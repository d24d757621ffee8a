#pragma once
// The profile store: a directory (on a cluster, a shared one) holding one profile per cluster and NCCL
// version, named <cluster>-nccl<major.minor>.toml. Saving is atomic and keeps the replaced file as
// <file>.prev, so a recalibration that turns out worse can be rolled back by hand (one generation is enough
// for that and keeps the directory small). Beside each profile, <file>.rules holds its compiled rules (a
// cache for the plugin's init; compiled_rules.hpp). Listing reads every *.toml, skips temporary, .prev and
// .rules files, and reports unreadable or invalid profiles beside the good ones instead of failing. Not
// synchronized: two processes saving the same cluster at once each write a whole file; the last rename wins.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::profiles {

struct StoredProfile {
  std::filesystem::path file;
  std::optional<Profile> profile;  // nullopt when unreadable or invalid
  std::string error;               // why, when profile is nullopt
};

class Store {
 public:
  explicit Store(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // $NCCL_AUTOTUNE_STORE, else $XDG_DATA_HOME/nccl-autotune, else ~/.local/share/nccl-autotune. Throws
  // InputError when none of these can be formed (no HOME).
  static std::filesystem::path default_dir();

  const std::filesystem::path& dir() const { return dir_; }
  // Sorted by file name; a missing directory is an empty store. Profiles are read as read_profile_for_use
  // reads them: rules from their compiled form when it belongs to the file, so without evidence.
  std::vector<StoredProfile> list() const;
  // Valid profiles whose cluster.name (or cluster.fingerprint) matches exactly, newest NCCL version first.
  std::vector<StoredProfile> find_by_name(std::string_view cluster) const;
  std::vector<StoredProfile> find_by_fingerprint(std::string_view fingerprint) const;
  // dir/<sanitized cluster name>-nccl<major.minor>.toml
  std::filesystem::path path_for(const Profile& profile) const;
  // Where a cluster's calibration journal lives: beside its profile, <profile stem>.journal.jsonl. Every
  // command that writes or looks for a journal in the store goes through here.
  std::filesystem::path journal_path_for(std::string_view cluster, std::string_view nccl_version) const;
  static std::filesystem::path journal_beside(const std::filesystem::path& profile_file);
  // Every published version of a profile stays readable, unchanged, under its digest (compiled_rules.hpp:
  // digest_text of profile_digest): <dir>/versions/<profile stem>-<16 hex digits>.toml. A job pinned to a
  // digest reads that file, so a store update while a job starts cannot give its ranks different rules.
  static std::filesystem::path version_path(const std::filesystem::path& profile_file,
                                            std::string_view digest);
  // Validates, creates the directory if needed, keeps the old file as .prev, writes atomically, then writes
  // (or, when that fails, removes) the compiled rules beside it; their failure never fails the save. Also
  // publishes the version under its digest (version_path) with its compiled rules, once: a version file is
  // never rewritten. Returns the path.
  std::filesystem::path save(const Profile& profile) const;

 private:
  std::filesystem::path dir_;
};

// Letters, digits, '.', '_', '-' kept; anything else becomes '_'; never empty, never starting with '.'.
std::string sanitize_file_name(std::string_view name);

// A cluster name must be its own file name in the store (two names, two files): 1 to 100 letters, digits,
// '.', '_' or '-', not starting with '.'. Throws InputError("", 0, "cluster name \"a/b\": expected ...;
// found '/'") otherwise. `what` names where it came from ("--name").
void check_cluster_name(std::string_view name, std::string_view what = "cluster name");

// Saving into a store, or a journal beside it, needs a directory there (or nothing yet): InputError(dir, 0,
// "expected a profile store (a directory, or none yet); found not a directory") otherwise.
void check_store_dir(const std::filesystem::path& dir);

}  // namespace autotune::profiles
