#pragma once
// Where our loadable libraries are (the tuner plugin and the modules holding the MPI and NCCL code), found
// from where this executable is, so that the build tree and any `cmake --install` prefix both work without
// configuration:
//   build tree:  <build>/cli/nccl-autotune      -> <build>/plugins/<library>
//   installed:   <prefix>/bin/nccl-autotune     -> <prefix>/<libdir>/<library>
// NCCL_AUTOTUNE_PLUGIN_DIR names the directory instead (tests, unusual layouts). `run` (the plugin it gives
// jobs) and `tune` (the plugin it forces choices through) both find the plugin here. Thread-safe.

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

// The places looked at for one of our libraries, in order (absolute paths of the file).
std::vector<std::filesystem::path> library_candidates(const std::string& file_name,
                                                      const PluginSearch& search = {});
// The first candidate that exists; throws std::runtime_error ("<what> <file> not found (looked at ...)")
// naming every place looked at when none does (an installation problem, not bad input).
std::filesystem::path find_library(const std::string& file_name, const std::string& what,
                                   const PluginSearch& search = {});

// The same for the tuner plugin.
inline std::vector<std::filesystem::path> plugin_candidates(const PluginSearch& search = {}) {
  return library_candidates(kPluginFileName, search);
}
inline std::filesystem::path find_plugin(const PluginSearch& search = {}) {
  return find_library(kPluginFileName, "tuner plugin", search);
}

}  // namespace autotune
