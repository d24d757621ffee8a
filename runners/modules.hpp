#pragma once
// The two shared modules that hold everything heavy, and how this process loads them: the MPI processes of a
// job (libnccl-autotune-mpi.so, links libmpi) and the NCCL runner (libnccl-autotune-runner.so, links libnccl
// and libcudart). nccl-autotune links neither library: `probe`, `profile`, `run`, `env` and `report` never
// map them, and a login node without CUDA still runs everything but real measurements. Each module exports
// one C function returning its table; both sides are built from this header in one build, and the table's
// `abi` guards against a module left over from another build. Modules are found where the plugin is
// (common/install_paths.hpp) and are never unloaded. Thread-safe (the first load is serialised).

#include <memory>
#include <string>

#include "runners/measure_options.hpp"
#include "runners/process_group.hpp"
#include "runners/runner.hpp"

namespace autotune::runners {

// Changes whenever a table below or a type it passes changes layout.
inline constexpr int kModuleAbi = 1;

struct MpiModule {
  int abi = kModuleAbi;
  // The job's MPI world; MPI is initialised on the first call and finalised at exit.
  const ProcessGroup& (*world)() = nullptr;
};

struct NcclRunnerModule {
  int abi = kModuleAbi;
  // Throws std::runtime_error ("no CUDA device: ...", the plugin not found, a build without NCCL).
  std::unique_ptr<Runner> (*make_runner)(const MeasureOptions& options,
                                         const ProcessGroup& processes) = nullptr;
};

inline constexpr const char* kMpiModuleFile = "libnccl-autotune-mpi.so";
inline constexpr const char* kMpiModuleEntry = "nccl_autotune_mpi_module";
inline constexpr const char* kNcclRunnerModuleFile = "libnccl-autotune-runner.so";
inline constexpr const char* kNcclRunnerModuleEntry = "nccl_autotune_runner_module";

// Load (once) and return the module's table. Throws std::runtime_error naming the file looked for and why it
// could not be used (not found, dlopen's message such as a missing libnccl.so.2, a table of another build).
const MpiModule& load_mpi_module();
const NcclRunnerModule& load_nccl_runner_module();

}  // namespace autotune::runners
