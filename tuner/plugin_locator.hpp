#pragma once
// Where our NCCL tuner plugin is, relative to the running executable: `<exe dir>/../plugins/` in the build
// tree, `<prefix>/lib/` (and the multiarch lib dir) when installed. Used by the NCCL runner (it loads the
// plugin to force choices) and by anything that points NCCL_TUNER_PLUGIN at it.

#include <filesystem>
#include <optional>

namespace autotune::tuner {

inline constexpr const char* kPluginFileName = "libnccl-tuner-autotune.so";

// The absolute path of the executable running this process (/proc/self/exe).
std::filesystem::path executable_path();

// The first existing candidate for an executable at `exe`; nullopt when none exists.
std::optional<std::filesystem::path> locate_plugin(const std::filesystem::path& exe);
inline std::optional<std::filesystem::path> locate_plugin() {
  return locate_plugin(executable_path());
}

}  // namespace autotune::tuner
