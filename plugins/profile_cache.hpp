#pragma once
// The profiles the plugin has read in this process, keyed by path and file identity (device, inode, size,
// modification time): each version of a file is read and parsed once and shared by every communicator, and a
// file replaced or rewritten since is read again by the next communicator that names it.
// Thread-safe: load() takes a mutex (communicator init only; never on the per-collective path). What it
// returns is immutable and lives as long as any communicator holds it.

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiles/nccl_csv.hpp"
#include "profiles/profile.hpp"

namespace autotune::plugin {

// One validated [constants] override, resolved to its place in the constants struct of each ABI version.
struct ConstantPatch {
  std::string name;                 // "ll_max_bw.hopper.2", for the INFO line
  std::optional<size_t> offset_v5;  // byte offset of the double in ncclTunerConstants_v5_t; none for rubin
  size_t offset_v7 = 0;             // ... in ncclTunerConstants_v7_t
  double value = 0.0;
};

struct LoadedProfile {
  std::string path;
  // "TOML", "TOML, compiled rules" (the rules came from <path>.rules, the rest from the TOML) or "CSV";
  // printed in the plugin's INFO line.
  std::string format;
  profiles::Profile profile;
  std::vector<profiles::CsvSkipped> skipped;  // CSV lines not used (logged once, by the loading communicator)
  std::vector<ConstantPatch> constants;
  std::string constants_problem;  // non-empty: the overrides were rejected as a whole, and why
};

struct LoadResult {
  std::shared_ptr<const LoadedProfile> profile;  // null when the file cannot be used
  std::string problem;                           // why, as one sentence for a WARN line
  bool first_load = false;                       // this call read the file (not the cache)
};

class ProfileCache {
 public:
  // The process-wide cache every communicator uses; nullptr once it is gone (the plugin is being unloaded or
  // the process is exiting: NCCL may still create a communicator from its own exit handlers, which then gets
  // NCCL's own choices). The cache is a static object, so NCCL's dlclose of the plugin (when its last
  // communicator is finalized) frees every cached profile instead of leaking it with the library's memory.
  static ProfileCache* instance();
  ~ProfileCache();

  // Never throws for a bad file: missing, unreadable, untrusted, malformed or newer-schema files give a
  // problem. (std::bad_alloc may still escape; the adapters catch it.)
  LoadResult load(const std::string& path);

 private:
  struct Identity {
    unsigned long long device = 0, inode = 0, size = 0;
    long long mtime_sec = 0, mtime_nsec = 0;
    bool operator==(const Identity&) const = default;
  };
  struct Entry {
    Identity identity;
    LoadResult result;
  };

  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

// Resolves and range-checks every [constants] override; throws InputError naming the first bad one.
std::vector<ConstantPatch> resolve_constants(const std::vector<profiles::ConstantOverride>& overrides,
                                             const std::string& file_name);

}  // namespace autotune::plugin
