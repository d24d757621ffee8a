#pragma once
// The version of the libnccl that loaded the plugin, asked of that library itself. The logger NCCL passes to
// init is NCCL's own function, so dladdr on it names the library the process really runs, whatever copy that
// is (a framework's bundled libnccl, another install on LD_LIBRARY_PATH); its ncclGetVersion answers. Without
// a logger, or when that library has no ncclGetVersion, the process's global ncclGetVersion, if any.
// Thread-safe (dladdr, dlopen with RTLD_NOLOAD, dlsym).

#include <optional>

#include "nccl/tuner_abi.h"
#include "nccl/version.hpp"

namespace autotune::plugin {

std::optional<nccl::Version> loading_nccl_version(ncclDebugLogger_t log);

}  // namespace autotune::plugin
