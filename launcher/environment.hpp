#pragma once
// The environment a job gets: the profile's [env], NCCL_TUNER_PLUGIN (the plugin library) and
// NCCL_AUTOTUNE_PROFILE (the profile), merged with what the user already set. A variable the user set wins
// unless the profile is told to (--override); either way the decision is recorded, so that `run` can report
// it on one line and `--dry-run`/`env` can show where every value comes from. Pure: reads the current
// environment only through the lookup it is given.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune::launcher {

enum class VarOrigin { profile_env, plugin_library, profile_path, profile_digest };
// "profile [env]", "tuner plugin", "profile path", "profile digest".
std::string_view describe(VarOrigin o);

enum class VarDecision {
  set,              // not set before: the job gets the profile's value
  unchanged,        // the user had set exactly this value
  kept_user,        // the user had set another value, and it stays
  overridden_user,  // the user had set another value; --override replaced it
};
std::string_view name(VarDecision d);

struct EnvVar {
  std::string name;
  std::string wanted;  // what the profile (or the launcher) asks for
  VarOrigin origin = VarOrigin::profile_env;
  VarDecision decision = VarDecision::set;
  std::optional<std::string> user_value;  // what was set before, if anything

  // What the job sees.
  const std::string& value() const { return decision == VarDecision::kept_user ? *user_value : wanted; }
  // Whether launching has to change this variable.
  bool needs_export() const {
    return decision == VarDecision::set || decision == VarDecision::overridden_user;
  }
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// The process's own environment.
EnvLookup process_environment();

struct EnvRequest {
  std::map<std::string, std::string> profile_env;
  std::filesystem::path plugin;
  std::filesystem::path profile;
  bool override_user = false;
  std::string digest;  // the content the job is pinned to; empty: not pinned
};

// Profile variables in name order, then NCCL_TUNER_PLUGIN, NCCL_AUTOTUNE_PROFILE and (when pinned)
// NCCL_AUTOTUNE_PROFILE_DIGEST. The launcher's own variables are never taken from the profile's [env].
// NCCL_AUTOTUNE_PROFILE and the digest are always the resolved ones (the user's values were inputs of the
// resolution), so the plugin reads what was exported.
std::vector<EnvVar> plan_environment(const EnvRequest& request, const EnvLookup& current);

// One line for stderr about the user's values that won (or were overridden); empty when there are none.
std::string user_conflicts_line(const std::vector<EnvVar>& vars);

}  // namespace autotune::launcher
