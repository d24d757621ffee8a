#pragma once
// How NCCL turns a plugin variable (NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN) into the library names it
// dlopens, in order (src/plugin/plugin_open.cc, one rule for every plugin type): unset tries
// "<prefix>.so"; a value is tried as given, then, when it is a bare name (no '/', not already a lib*.so file
// name), as "<prefix>-<value>.so". "none" (any case) is handled by the callers: it disables the plugin.
// Pure; thread-safe.

#include <optional>
#include <string>
#include <vector>

namespace autotune::nccl {

// prefix: "libnccl-tuner", "libnccl-profiler".
std::vector<std::string> plugin_library_names(const std::string& prefix,
                                              const std::optional<std::string>& value);

}  // namespace autotune::nccl
