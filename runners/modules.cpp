#include "runners/modules.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "common/install_paths.hpp"

namespace autotune::runners {
namespace {

// Opens our module and returns its table, checked against this build's layout. The handle is never closed:
// runners and the MPI world made by the module live until the process exits.
template <typename Table>
const Table& load(const char* file, const char* entry, const char* what) {
  const std::string path = find_library(file, what).string();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw std::runtime_error(std::string("cannot load ") + path + ": " + dlerror());
  using Entry = const Table* (*)();
  auto get = reinterpret_cast<Entry>(dlsym(handle, entry));
  const Table* table = get ? get() : nullptr;
  if (!table) throw std::runtime_error(path + " has no " + entry + ": not a module of nccl-autotune");
  if (table->abi != kModuleAbi)
    throw std::runtime_error(path + " is from another build of nccl-autotune (module ABI " +
                             std::to_string(table->abi) + ", this program " + std::to_string(kModuleAbi) +
                             "): reinstall both together");
  return *table;
}

}  // namespace

const MpiModule& load_mpi_module() {
  static const MpiModule& m = load<MpiModule>(kMpiModuleFile, kMpiModuleEntry, "MPI module");
  return m;
}

const NcclRunnerModule& load_nccl_runner_module() {
  static const NcclRunnerModule& m =
      load<NcclRunnerModule>(kNcclRunnerModuleFile, kNcclRunnerModuleEntry, "NCCL runner module");
  return m;
}

}  // namespace autotune::runners
