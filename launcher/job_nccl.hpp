#pragma once
// Which libnccl the job will load, and its version, found before the job starts and without loading it: the
// profile must be the one calibrated for that NCCL (profiles are kept per major.minor, and NCCL's choices
// and the plugin ABI change between them), and the node's fingerprint is made for it. Looked for as the
// job's own loader would find it: $NCCL_AUTOTUNE_NCCL_LIB when the operator names it, then every directory
// of $LD_LIBRARY_PATH, the NCCL wheel of the active Python environment ($VIRTUAL_ENV, $CONDA_PREFIX:
// nvidia/nccl/lib, where PyTorch's wheels find it), $CONDA_PREFIX/lib, $NCCL_HOME/lib, then the system's
// library directories (/etc/ld.so.conf and its includes, then the default ones). The launcher cannot see a
// library that the command itself chooses (an RPATH, a dlopen by path): the plugin checks again inside the
// job, through NCCL's own version. Thread-compatible.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher/environment.hpp"
#include "nccl/version.hpp"

namespace autotune::launcher {

struct JobNccl {
  std::optional<std::filesystem::path> library;  // the file found
  std::optional<nccl::Version> version;          // its version, when it could be read
  std::string how;                               // where it was found ("LD_LIBRARY_PATH"), or why none was
};

// The directories to look in, in order, each with what led there. `root` prefixes the system files read
// (/etc/ld.so.conf): a seam for tests.
std::vector<std::pair<std::filesystem::path, std::string>> nccl_search_path(
    const EnvLookup& env, const std::filesystem::path& root = "/");

// The first libnccl.so.2 on that path (or the named one) and its version.
JobNccl find_job_nccl(const EnvLookup& env, const std::filesystem::path& root = "/");

}  // namespace autotune::launcher
