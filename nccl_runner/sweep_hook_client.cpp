#include "nccl_runner/sweep_hook_client.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/install_paths.hpp"

namespace autotune::nccl_runner {

namespace {

// The plugin reads these at every communicator init; a profile left in the environment (the launcher sets
// them for jobs) would turn the "default" candidate into that profile's choice.
constexpr const char* kProfileVariables[] = {"NCCL_AUTOTUNE_PROFILE", "NCCL_TUNER_CONFIG_FILE"};

}  // namespace

SweepHookClient::SweepHookClient(const std::string& plugin_path) {
  std::filesystem::path path;
  if (!plugin_path.empty()) {
    path = plugin_path;
  } else {
    try {
      path = find_plugin();  // the same library `run` gives jobs
    } catch (const std::exception& e) {
      problem_ = e.what();
      return;
    }
  }
  std::error_code ec;
  // NCCL dlopens the value as given: only an absolute path is certain to name the file we open here.
  auto absolute = std::filesystem::absolute(path, ec);
  path_ = (ec ? path : absolute).string();
  if (!std::filesystem::is_regular_file(path_, ec)) {
    problem_ = "tuner plugin " + path_ + " does not exist";
    path_.clear();
    return;
  }
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    problem_ = "cannot load tuner plugin " + path_ + ": " + (why ? why : "dlopen failed");
    return;
  }
  auto* version = reinterpret_cast<int (*)()>(dlsym(handle_, "nccl_autotune_hook_version"));
  auto* force = reinterpret_cast<int (*)(int, int, int)>(dlsym(handle_, "nccl_autotune_force"));
  auto* last = reinterpret_cast<int (*)(nccl_autotune_seen_t*)>(dlsym(handle_, "nccl_autotune_last"));
  if (version == nullptr || force == nullptr || last == nullptr) {
    problem_ = "tuner plugin " + path_ + " has no sweep hook (nccl_autotune_force/_last/_hook_version)";
    return;
  }
  if (int v = version(); v != NCCL_AUTOTUNE_HOOK_VERSION) {
    problem_ = "tuner plugin " + path_ + " has sweep hook version " + std::to_string(v) +
               ", this build needs " + std::to_string(NCCL_AUTOTUNE_HOOK_VERSION);
    return;
  }
  setenv("NCCL_TUNER_PLUGIN", path_.c_str(), 1);
  for (const char* name : kProfileVariables) unsetenv(name);
  force_ = force;
  last_ = last;
}

SweepHookClient::~SweepHookClient() {
  // Leave later NCCL work in this process to NCCL's own choice. The library stays loaded: NCCL holds it too.
  if (force_ != nullptr) force_(-1, -1, 0);
}

bool SweepHookClient::force(int algorithm, int protocol, int channels) const {
  return force_ != nullptr && force_(algorithm, protocol, channels) == 0;
}

std::optional<nccl_autotune_seen_t> SweepHookClient::last() const {
  nccl_autotune_seen_t seen{};
  if (last_ == nullptr || last_(&seen) != 0) return std::nullopt;
  return seen;
}

}  // namespace autotune::nccl_runner
