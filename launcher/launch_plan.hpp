#pragma once
// What `run` and `env` decide before anything happens: which profile applies to this node and why, whether
// it can be used, and the environment it gives the job. Resolution order: --profile, --cluster (in the
// store), $NCCL_AUTOTUNE_PROFILE, then the store's measured profile whose fingerprint is this node's.
// Then one version per job: the content is fixed by its digest, inherited with $NCCL_AUTOTUNE_PROFILE
// ($NCCL_AUTOTUNE_PROFILE_DIGEST), else agreed through the job's pin in the store (job_pin.hpp), and the
// job is given the store's immutable copy of that version, so that ranks starting while the store changes
// still read one profile.
// Anything that prevents tuning is a Problem with one sentence; the caller decides whether to run untuned
// or stop (--strict). The world (profile reader, store, probe, plugin lookup) comes in through Services so
// that tests can stand in for it. Not thread-safe (Services may not be).

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launcher/environment.hpp"
#include "launcher/fingerprint_cache.hpp"
#include "launcher/job_nccl.hpp"
#include "profiles/profile.hpp"

namespace autotune::launcher {

struct Services {
  // Reads and validates a profile; throws InputError (with file and line) when it does not validate.
  std::function<profiles::Profile(const std::filesystem::path&)> read_profile;
  // The store directory: the --store option when given, else the store's own default resolution.
  std::function<std::filesystem::path(const std::optional<std::filesystem::path>& option)> store_dir;
  // The profile for a cluster name in a store, if any: the one made for this NCCL major*100+minor when the
  // cluster has one, else its newest.
  std::function<std::optional<std::filesystem::path>(const std::filesystem::path& store,
                                                     const std::string& name, int nccl_major_minor)>
      find_by_name;
  // The store's profiles whose fingerprint is this one, best first.
  std::function<std::vector<std::filesystem::path>(const std::filesystem::path& store,
                                                   const std::string& fingerprint)>
      find_by_fingerprint;
  // This node's fingerprint for the job's NCCL major*100+minor (normally through the per-boot cache);
  // throws when the node cannot be probed.
  std::function<FingerprintLookup(int nccl_major_minor)> node_fingerprint;
  // What this node's fingerprint hashes (topology::fingerprint_facts), probed afresh: called only once a
  // profile's fingerprint has not matched, to say what differs; throws when the node cannot be probed.
  std::function<std::vector<std::string>(int nccl_major_minor)> node_fingerprint_facts;
  // The libnccl the job will load (job_nccl.hpp).
  std::function<JobNccl(const EnvLookup&)> job_nccl;
  // NCCL major*100+minor assumed when the job's libnccl cannot be found or read: the one this tool was built
  // with.
  int built_nccl_major_minor = 0;
  // The plugin library; throws std::runtime_error naming where it looked.
  std::function<std::filesystem::path()> plugin;
};

struct LaunchOptions {
  std::optional<std::filesystem::path> profile;
  std::optional<std::string> cluster;
  std::optional<std::filesystem::path> store;
  bool override_user = false;
};

enum class ProfileOrigin { option_profile, option_cluster, env_variable, store_fingerprint };
// "--profile", "--cluster", "NCCL_AUTOTUNE_PROFILE", "store fingerprint match".
std::string_view describe(ProfileOrigin o);

enum class Problem {
  none,
  disabled,              // NCCL_TUNER_PLUGIN=none: the user turned tuning off (not an error)
  no_profile,            // nothing names or matches a profile
  fingerprint_mismatch,  // the profile was calibrated for another kind of node
  no_fingerprint,        // this node could not be probed, so nothing can be matched or checked
  untrusted,             // someone other than the owner or root can change the profile or store
  invalid_profile,       // the profile does not validate
  no_plugin,             // the plugin library is not installed where expected
  other_nccl,            // the profile was made for another NCCL major.minor than the job loads
  version_lost,          // the job is pinned to a version of the profile the store no longer holds
};
std::string_view name(Problem p);

struct LaunchPlan {
  Problem problem = Problem::none;
  std::string problem_text;  // one sentence, when problem != none

  std::optional<std::filesystem::path> profile_path;  // absolute, once known
  std::optional<ProfileOrigin> origin;
  std::optional<std::filesystem::path> store;  // when the store was consulted
  std::optional<profiles::Profile> profile;    // once read and valid
  std::optional<std::string> fingerprint;      // this node's, when it was needed
  JobNccl nccl;                                // the job's libnccl, as found
  int nccl_major_minor = 0;                    // the job's, else the built-in one (with a note saying so)
  std::string digest;                          // of the profile's text, once read (16 hex digits)
  std::optional<std::string> pinned_by;        // "job 1234.0" when the job's pin chose the version
  bool fingerprint_from_cache = false;

  std::vector<EnvVar> vars;        // empty unless problem == none
  std::vector<std::string> notes;  // lines worth showing the user even when all went well (simulated profile)
  std::vector<std::string> details;  // lines for --dry-run only (cache misses and the like)

  bool tuned() const { return problem == Problem::none; }
  // What `run --strict` and `env --strict` exit with for this plan: 0 tuned or disabled, 1 when the
  // installation is broken (no plugin, a lost version), 2 for the input problems.
  int strict_exit_status() const;
};

LaunchPlan plan_launch(const LaunchOptions& options, const Services& services, const EnvLookup& current);

}  // namespace autotune::launcher
