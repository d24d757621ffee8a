#pragma once
// The profiles the plugin has read in this process, by path: each is read and parsed once, by the first
// communicator that names it, and every later communicator of the job gets that same profile, even when the
// file is replaced or rewritten meanwhile (ranks of one job must never decide differently, and a store update
// during a job is for the next job). A change is noticed by file identity (device, inode, size, modification
// time) and said once. A file that could not be used stays unused for the job.
// Thread-safe: load() takes a mutex (communicator init only; never on the per-collective path). What it
// returns is immutable and lives as long as any communicator holds it.

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "plugins/shape_rules.hpp"
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
  uint64_t digest = 0;  // of the exact text read (profiles/compiled_rules.hpp: profile_digest)
  // "TOML", "TOML, compiled rules" (the rules came from <path>.rules, the rest from the TOML) or "CSV";
  // printed in the plugin's INFO line.
  std::string format;
  profiles::Profile profile;
  std::vector<profiles::CsvSkipped> skipped;  // CSV lines not used (logged once, by the loading communicator)
  std::vector<ConstantPatch> constants;
  std::string constants_problem;  // non-empty: the overrides were rejected as a whole, and why
  // The rules compiled per communicator shape, filled as communicators of each shape arrive. Mutable: a
  // memo of what the immutable fields above determine, behind its own mutex.
  mutable ShapeRulesCache shapes;
};

struct LoadResult {
  std::shared_ptr<const LoadedProfile> profile;  // null when the file cannot be used
  std::string problem;                           // why, as one sentence for a WARN line
  bool first_load = false;                       // this call read the file (not the cache)
  // Said once per process, by the first communicator after the file changed: the job keeps what it read.
  std::string changed;
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
  // The same profile load() gives, read now if it was not yet, without saying anything: the next load() is
  // still the first one (the profiler half, whose init NCCL calls before the tuner's, looks at [online]
  // through here and leaves every message to the tuner half). Null when the file cannot be used.
  std::shared_ptr<const LoadedProfile> peek(const std::string& path);

  struct Identity {
    unsigned long long device = 0, inode = 0, size = 0;
    long long mtime_sec = 0, mtime_nsec = 0;
    bool operator==(const Identity&) const = default;
  };

 private:
  struct Entry {
    Identity identity;
    LoadResult result;
    bool change_said = false;
  };

  LoadResult kept(Entry& entry, const std::string& path);
  static LoadResult read(const std::string& path, Identity* identity);

  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

// Resolves and range-checks every [constants] override; throws InputError naming the first bad one.
std::vector<ConstantPatch> resolve_constants(const std::vector<profiles::ConstantOverride>& overrides,
                                             const std::string& file_name);

}  // namespace autotune::plugin
