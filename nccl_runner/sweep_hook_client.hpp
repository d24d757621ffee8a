#pragma once
// The measuring process's end of the plugin's sweep hook (plugins/sweep_hook.h): it points NCCL at our tuner
// plugin (NCCL_TUNER_PLUGIN = its absolute path, which must happen before the first NCCL call) and dlopens
// that same file, so the handle is the very library NCCL loads and forcing through it steers NCCL. It clears
// the plugin's profile variables in this process, so that "nothing forced" is NCCL's own choice and not a
// profile's. When the plugin cannot be found or loaded, usable() is false and problem() says why; NCCL then
// runs with its own choices. Not thread-safe (setenv); create it once, on the main thread.

#include <optional>
#include <string>

#include "nccl/sweep_hook.h"

namespace autotune::nccl_runner {

class SweepHookClient {
 public:
  // `plugin_path` empty = locate_plugin() next to this executable.
  explicit SweepHookClient(const std::string& plugin_path);
  ~SweepHookClient();
  SweepHookClient(const SweepHookClient&) = delete;
  SweepHookClient& operator=(const SweepHookClient&) = delete;

  bool usable() const { return force_ != nullptr; }
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }

  // nccl_autotune_force; -1/-1/0 is NCCL's own choice. False when not usable or the hook refused the ids.
  bool force(int algorithm, int protocol, int channels) const;
  // nccl_autotune_last; nullopt when not usable.
  std::optional<nccl_autotune_seen_t> last() const;

 private:
  void* handle_ = nullptr;
  int (*force_)(int, int, int) = nullptr;
  int (*last_)(nccl_autotune_seen_t*) = nullptr;
  std::string path_;
  std::string problem_;
};

}  // namespace autotune::nccl_runner
