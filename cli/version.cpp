#include <dlfcn.h>

#include <string>

#include "autotune/version.hpp"
#include "cli/commands.hpp"

namespace autotune::cli {
namespace {

std::string nccl_version_string(int code) {
  // NCCL_VERSION_CODE is major*10000 + minor*100 + patch since 2.9.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

// The runtime NCCL is looked up with dlopen, not linked: the CLI must also run on login nodes without NCCL.
std::string runtime_nccl() {
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "not found (" + std::string(dlerror()) + ")";
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(lib, "ncclGetVersion"));
  std::string out = "no ncclGetVersion";
  int code = 0;
  if (get && get(&code) == 0) out = nccl_version_string(code);
  dlclose(lib);
  return out;
}

}  // namespace

std::string version_text() {
  std::string built = kBuiltNcclVersion ? "NCCL " + nccl_version_string(kBuiltNcclVersion) : "no NCCL";
  return std::string("nccl-autotune ") + kToolVersion + " (built with " + built +
         "; runtime libnccl.so.2: " + runtime_nccl() + ")";
}

}  // namespace autotune::cli
