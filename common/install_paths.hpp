#pragma once
// Where the tuner plugin library is, found from where this executable is, so that the build tree and any
// `cmake --install` prefix both work without configuration:
//   build tree:  <build>/cli/nccl-autotune      -> <build>/plugins/libnccl-tuner-autotune.so
//   installed:   <prefix>/bin/nccl-autotune     -> <prefix>/<libdir>/libnccl-tuner-autotune.so
// NCCL_AUTOTUNE_PLUGIN_DIR names the directory instead (tests, unusual layouts). Also used by the tuner's
// job starter, which must point NCCL at the same library. Thread-safe.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace autotune {

inline constexpr const char* kPluginFileName = "libnccl-tuner-autotune.so";

struct PluginSearch {
  std::filesystem::path executable;                // empty: /proc/self/exe
  std::optional<std::string> plugin_dir_override;  // nullopt: $NCCL_AUTOTUNE_PLUGIN_DIR
};

// The places looked at, in order (absolute paths of the library file).
std::vector<std::filesystem::path> plugin_candidates(const PluginSearch& search = {});

// The absolute path of the first candidate that exists; throws std::runtime_error naming every place looked
// at when none does (an installation problem, not bad input).
std::filesystem::path find_plugin(const PluginSearch& search = {});

}  // namespace autotune
