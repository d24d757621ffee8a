#include "launcher/environment.hpp"

#include <cstdlib>

namespace autotune::launcher {

std::string_view describe(VarOrigin o) {
  switch (o) {
    case VarOrigin::profile_env:
      return "profile [env]";
    case VarOrigin::plugin_library:
      return "tuner plugin";
    case VarOrigin::profile_path:
      return "profile path";
    case VarOrigin::profile_digest:
      return "profile digest";
  }
  return "?";
}

std::string_view name(VarDecision d) {
  switch (d) {
    case VarDecision::set:
      return "set";
    case VarDecision::unchanged:
      return "unchanged";
    case VarDecision::kept_user:
      return "kept-user";
    case VarDecision::overridden_user:
      return "overridden-user";
  }
  return "?";
}

EnvLookup process_environment() {
  return [](const std::string& n) -> std::optional<std::string> {
    if (const char* v = std::getenv(n.c_str())) return std::string(v);
    return std::nullopt;
  };
}

namespace {

EnvVar decide(std::string n, std::string wanted, VarOrigin origin, bool override_user,
              const EnvLookup& current) {
  EnvVar v{std::move(n), std::move(wanted), origin, VarDecision::set, std::nullopt};
  v.user_value = current(v.name);
  if (!v.user_value)
    v.decision = VarDecision::set;
  else if (*v.user_value == v.wanted)
    v.decision = VarDecision::unchanged;
  else
    v.decision = override_user ? VarDecision::overridden_user : VarDecision::kept_user;
  return v;
}

}  // namespace

std::vector<EnvVar> plan_environment(const EnvRequest& request, const EnvLookup& current) {
  std::vector<EnvVar> out;
  for (const auto& [n, value] : request.profile_env) {
    if (n == "NCCL_TUNER_PLUGIN" || n == "NCCL_AUTOTUNE_PROFILE" || n == "NCCL_AUTOTUNE_PROFILE_DIGEST")
      continue;
    out.push_back(decide(n, value, VarOrigin::profile_env, request.override_user, current));
  }
  out.push_back(decide("NCCL_TUNER_PLUGIN", request.plugin.string(), VarOrigin::plugin_library,
                       request.override_user, current));
  // Always the profile resolved: the user's own NCCL_AUTOTUNE_PROFILE already took part in resolution and
  // lost only to an explicit --profile or --cluster, which the plugin must then follow too.
  out.push_back(
      decide("NCCL_AUTOTUNE_PROFILE", request.profile.string(), VarOrigin::profile_path, true, current));
  if (!request.digest.empty())
    out.push_back(
        decide("NCCL_AUTOTUNE_PROFILE_DIGEST", request.digest, VarOrigin::profile_digest, true, current));
  return out;
}

std::string user_conflicts_line(const std::vector<EnvVar>& vars) {
  std::string kept, overridden;
  for (const auto& v : vars) {
    std::string item = v.name + "=" + v.user_value.value_or("") + " (profile: " + v.wanted + ")";
    if (v.decision == VarDecision::kept_user) kept += (kept.empty() ? "" : ", ") + item;
    if (v.decision == VarDecision::overridden_user) overridden += (overridden.empty() ? "" : ", ") + item;
  }
  std::string line;
  if (!kept.empty()) line = "keeping your " + kept + "; --override lets the profile win";
  if (!overridden.empty()) line += (line.empty() ? "" : "; ") + std::string("overriding your ") + overridden;
  return line;
}

}  // namespace autotune::launcher
