#include "launcher/launch_plan.hpp"

#include <exception>
#include <system_error>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "launcher/job_pin.hpp"
#include "nccl/version.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/file_trust.hpp"
#include "profiles/store.hpp"
#include "topology/fingerprint.hpp"

namespace autotune::launcher {
namespace fs = std::filesystem;

std::string_view describe(ProfileOrigin o) {
  switch (o) {
    case ProfileOrigin::option_profile:
      return "--profile";
    case ProfileOrigin::option_cluster:
      return "--cluster";
    case ProfileOrigin::env_variable:
      return "NCCL_AUTOTUNE_PROFILE";
    case ProfileOrigin::store_fingerprint:
      return "store fingerprint match";
  }
  return "?";
}

std::string_view name(Problem p) {
  switch (p) {
    case Problem::none:
      return "none";
    case Problem::disabled:
      return "disabled";
    case Problem::no_profile:
      return "no-profile";
    case Problem::fingerprint_mismatch:
      return "fingerprint-mismatch";
    case Problem::no_fingerprint:
      return "no-fingerprint";
    case Problem::untrusted:
      return "untrusted";
    case Problem::invalid_profile:
      return "invalid-profile";
    case Problem::no_plugin:
      return "no-plugin";
    case Problem::version_lost:
      return "version-lost";
    case Problem::other_nccl:
      return "other-nccl";
  }
  return "?";
}

int LaunchPlan::strict_exit_status() const {
  switch (problem) {
    case Problem::none:
    case Problem::disabled:
      return kExitOk;
    case Problem::no_plugin:
    case Problem::version_lost:
      return kExitFailed;
    default:
      return kExitBadInput;
  }
}

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

fs::path absolute_path(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return ec ? p : a.lexically_normal();
}

// Fills plan.fingerprint; on failure sets the problem and returns false.
bool need_fingerprint(LaunchPlan& plan, const Services& services) {
  if (plan.fingerprint) return true;
  try {
    FingerprintLookup fp = services.node_fingerprint(plan.nccl_major_minor);
    plan.fingerprint = fp.fingerprint;
    plan.fingerprint_from_cache = fp.from_cache;
    if (!fp.note.empty()) plan.details.push_back(fp.note);
    return true;
  } catch (const std::exception& e) {
    plan.problem = Problem::no_fingerprint;
    plan.problem_text = std::string("cannot fingerprint this node: ") + e.what();
    return false;
  }
}

// "; what differs: GPUs: calibrated ..., this node ..." when the profile kept the facts it hashed (profiles
// written before it did keep none) and this node can be probed; the refusal stands either way.
std::string what_differs(const std::vector<std::string>& calibrated, int nccl_major_minor,
                         const Services& services) {
  if (calibrated.empty() || !services.node_fingerprint_facts) return "";
  try {
    std::string out;
    for (const auto& d :
         topology::fingerprint_differences(calibrated, services.node_fingerprint_facts(nccl_major_minor)))
      out += (out.empty() ? "; what differs: " : "; ") + d;
    return out;
  } catch (const std::exception& e) {
    return std::string("; what differs is unknown (") + e.what() + ")";
  }
}

bool trusted(LaunchPlan& plan, const fs::path& path, const char* what) {
  if (profiles::insecure_allowed()) return true;
  if (auto why = profiles::untrusted_reason(path)) {
    plan.problem = Problem::untrusted;
    plan.problem_text = std::string("not using ") + what + " " + path.string() + ": " + *why +
                        " (fix the permissions, or set NCCL_AUTOTUNE_INSECURE=1)";
    return false;
  }
  return true;
}

// Step 0: the NCCL the job will run, which chooses among a cluster's profiles and makes the fingerprint.
void know_job_nccl(LaunchPlan& plan, const Services& services, const EnvLookup& current) {
  plan.nccl = services.job_nccl(current);
  if (plan.nccl.version) {
    plan.nccl_major_minor = plan.nccl.version->major_minor();
    return;
  }
  plan.nccl_major_minor = services.built_nccl_major_minor;
  const std::string built =
      nccl::Version{plan.nccl_major_minor / 100, plan.nccl_major_minor % 100, 0}.major_minor_text();
  plan.notes.push_back("the job's NCCL is not known (" + plan.nccl.how + "): assuming NCCL " + built +
                       ", which this tool was built with; NCCL_AUTOTUNE_NCCL_LIB names the library");
}

// A profile made for another NCCL major.minor than the job's, unless the profile or the user allows it
// (the plugin holds to the same rule inside the job).
bool same_nccl(LaunchPlan& plan, const EnvLookup& current) {
  const profiles::Profile& profile = *plan.profile;
  auto made_for = nccl::Version::parse(profile.provenance.nccl_version);
  if (!plan.nccl.version || !made_for || made_for->same_major_minor(*plan.nccl.version)) return true;
  auto allow = current("NCCL_AUTOTUNE_OTHER_NCCL");
  if (profile.apply_under_other_nccl || (allow && *allow == "apply")) {
    plan.notes.push_back("applying a profile made for NCCL " + made_for->text() + " to a job running NCCL " +
                         plan.nccl.version->text() + ", as its policy allows");
    return true;
  }
  plan.problem = Problem::other_nccl;
  plan.problem_text = "profile " + plan.profile_path->string() + " was made for NCCL " + made_for->text() +
                      ", the job loads NCCL " + plan.nccl.version->text() + " (" +
                      plan.nccl.library->string() + ", found through " + plan.nccl.how +
                      "): calibrate for it, or allow it with [policy] other_nccl = \"apply\" or "
                      "NCCL_AUTOTUNE_OTHER_NCCL=apply";
  return false;
}

// Steps 1-2: which file. False (with the problem set) when there is none.
bool resolve_path(LaunchPlan& plan, const LaunchOptions& options, const Services& services,
                  const EnvLookup& current) {
  if (options.profile) {
    plan.profile_path = absolute_path(*options.profile);
    plan.origin = ProfileOrigin::option_profile;
    return true;
  }
  if (!options.cluster) {
    if (auto v = current("NCCL_AUTOTUNE_PROFILE"); v && !v->empty()) {
      plan.profile_path = absolute_path(*v);
      plan.origin = ProfileOrigin::env_variable;
      return true;
    }
  }
  try {
    plan.store = absolute_path(services.store_dir(options.store));
  } catch (const std::exception& e) {
    plan.problem = Problem::no_profile;
    plan.problem_text = std::string("no profile store: ") + e.what();
    return false;
  }
  std::error_code ec;
  if (!fs::is_directory(*plan.store, ec)) {
    plan.problem = Problem::no_profile;
    plan.problem_text = "profile store " + plan.store->string() + " does not exist";
    return false;
  }
  if (!trusted(plan, *plan.store, "profile store")) return false;
  if (options.cluster) {
    auto found = services.find_by_name(*plan.store, *options.cluster, plan.nccl_major_minor);
    if (!found) {
      plan.problem = Problem::no_profile;
      plan.problem_text = "no profile for cluster '" + *options.cluster + "' in " + plan.store->string();
      return false;
    }
    plan.profile_path = absolute_path(*found);
    plan.origin = ProfileOrigin::option_cluster;
    return true;
  }
  if (!need_fingerprint(plan, services)) return false;
  // A simulated or stand-in profile describes a modelled machine; it is used only when named, never matched.
  size_t simulated = 0;
  for (const fs::path& candidate : services.find_by_fingerprint(*plan.store, *plan.fingerprint)) {
    try {
      profiles::Profile p = services.read_profile(candidate);
      if (profiles::from_model(p.provenance.source)) {
        ++simulated;
        continue;
      }
    } catch (const std::exception&) {
      // Chosen anyway: its validation error is then reported, rather than another profile silently used.
    }
    plan.profile_path = absolute_path(candidate);
    plan.origin = ProfileOrigin::store_fingerprint;
    return true;
  }
  plan.problem = Problem::no_profile;
  plan.problem_text =
      "no profile in " + plan.store->string() + " matches this node (fingerprint " + *plan.fingerprint + ")";
  if (simulated)
    plan.problem_text +=
        "; simulated and stand-in profiles are used only when named with --profile or --cluster";
  return false;
}

std::optional<std::string> digest_of(const fs::path& file) {
  try {
    return profiles::file_digest_text(file);
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: the checks that follow say why
  }
}

// The job this process belongs to, as its ranks all see it: a Slurm step (each srun is its own NCCL job), or
// a PMIx namespace (Open MPI, PRRTE). Empty outside a parallel job.
std::string job_id(const EnvLookup& current) {
  if (auto job = current("SLURM_JOB_ID"); job && !job->empty()) {
    auto step = current("SLURM_STEP_ID");
    return *job + (step && !step->empty() ? "." + *step : "");
  }
  if (auto ns = current("PMIX_NAMESPACE"); ns && !ns->empty()) return *ns;
  return "";
}

// The version the job must use: the one inherited with the profile, else the job's pin, else this file's.
// Moves plan.profile_path to the pinned profile when the pin names another.
std::optional<std::string> wanted_version(LaunchPlan& plan, const LaunchOptions& options,
                                          const Services& services, const EnvLookup& current) {
  if (plan.origin == ProfileOrigin::env_variable)
    if (auto d = current("NCCL_AUTOTUNE_PROFILE_DIGEST"); d && !d->empty()) return *d;
  std::optional<std::string> own = digest_of(*plan.profile_path);
  const std::string job = job_id(current);
  if (job.empty() || !own) return own;
  fs::path store;
  try {
    store = plan.store ? *plan.store : absolute_path(services.store_dir(options.store));
  } catch (const std::exception& e) {
    plan.details.push_back(std::string("job ") + job + " not pinned: no store (" + e.what() + ")");
    return own;
  }
  std::string note;
  auto pin = pin_job(pin_directory(store, current), job, {*plan.profile_path, *own}, &note);
  if (!pin) {
    plan.details.push_back("job " + job + " not pinned: " + note);
    return own;
  }
  plan.pinned_by = "job " + job;
  if (pin->profile != *plan.profile_path)
    plan.details.push_back("job " + job + " is pinned to " + pin->profile.string() + ", not " +
                           plan.profile_path->string() + " that this node resolved");
  plan.profile_path = pin->profile;
  return pin->digest;
}

// Step 3: one version for the whole job, read from the store's immutable copy where there is one. False
// (with the problem set) when the job's version is gone.
bool settle_version(LaunchPlan& plan, const LaunchOptions& options, const Services& services,
                    const EnvLookup& current) {
  std::optional<std::string> want = wanted_version(plan, options, services, current);
  if (!want) return true;
  const fs::path& path = *plan.profile_path;
  const fs::path copy = profiles::Store::version_path(path, *want);
  std::error_code ec;
  if (fs::is_regular_file(copy, ec) && digest_of(copy) == want) {
    plan.profile_path = copy;
  } else if (digest_of(path) != want) {
    plan.problem = Problem::version_lost;
    plan.problem_text =
        "the job uses version " + *want + " of " + path.string() +
        (plan.pinned_by ? " (pinned by " + *plan.pinned_by + ")" : " (NCCL_AUTOTUNE_PROFILE_DIGEST)") +
        ", which has changed since and whose copy " + copy.string() + " is missing";
    return false;
  }
  plan.digest = *want;
  return true;
}

}  // namespace

LaunchPlan plan_launch(const LaunchOptions& options, const Services& services, const EnvLookup& current) {
  LaunchPlan plan;
  if (auto v = current("NCCL_TUNER_PLUGIN"); v && equals_ignoring_case(*v, "none")) {
    plan.problem = Problem::disabled;
    plan.problem_text = "NCCL_TUNER_PLUGIN=none: tuning is off";
    return plan;
  }
  know_job_nccl(plan, services, current);
  if (!resolve_path(plan, options, services, current)) return plan;
  if (!settle_version(plan, options, services, current)) return plan;
  const fs::path& path = *plan.profile_path;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    plan.problem = Problem::no_profile;
    plan.problem_text =
        "profile " + path.string() + " (from " + std::string(describe(*plan.origin)) + ") does not exist";
    return plan;
  }
  if (!trusted(plan, path, "profile")) return plan;
  try {
    plan.profile = services.read_profile(path);
  } catch (const InputError& e) {
    plan.problem = Problem::invalid_profile;
    plan.problem_text = std::string("profile does not validate: ") + e.what();
    return plan;
  }
  if (!same_nccl(plan, current)) return plan;
  const profiles::Profile& profile = *plan.profile;
  if (profiles::from_model(profile.provenance.source)) {
    plan.notes.push_back(
        "using " + std::string(profiles::model_label(profile.provenance.source)) + " profile " +
        path.string() + ": its rules come from the performance model, not from measurements on this cluster");
    plan.details.push_back("fingerprint not checked: a " + std::string(name(profile.provenance.source)) +
                           " profile describes a modelled node");
  } else if (plan.origin != ProfileOrigin::store_fingerprint) {
    if (profile.cluster.fingerprint.empty()) {
      plan.details.push_back("fingerprint not checked: the profile records none");
    } else {
      if (!need_fingerprint(plan, services)) return plan;
      if (*plan.fingerprint != profile.cluster.fingerprint) {
        plan.problem = Problem::fingerprint_mismatch;
        plan.problem_text = "profile " + path.string() + " was calibrated for nodes with fingerprint " +
                            profile.cluster.fingerprint + ", this node is " + *plan.fingerprint +
                            what_differs(profile.cluster.fingerprint_facts, plan.nccl_major_minor, services);
        return plan;
      }
    }
  }
  fs::path plugin;
  try {
    plugin = services.plugin();
  } catch (const std::exception& e) {
    plan.problem = Problem::no_plugin;
    plan.problem_text = e.what();
    return plan;
  }
  plan.vars = plan_environment(
      {profile.env, plugin, path, options.override_user, plan.digest, profile.online.has_value()}, current);
  return plan;
}

}  // namespace autotune::launcher
