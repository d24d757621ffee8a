#include "plugins/loading_nccl.hpp"

#include <dlfcn.h>

namespace autotune::plugin {
namespace {

using GetVersion = int (*)(int*);

std::optional<nccl::Version> ask(void* symbol) {
  if (symbol == nullptr) return std::nullopt;
  int code = 0;
  if (reinterpret_cast<GetVersion>(symbol)(&code) != 0) return std::nullopt;
  return nccl::Version::from_code(code);
}

}  // namespace

std::optional<nccl::Version> loading_nccl_version(ncclDebugLogger_t log) {
  Dl_info info{};
  if (log != nullptr && dladdr(reinterpret_cast<void*>(log), &info) != 0 && info.dli_fname != nullptr) {
    // RTLD_NOLOAD: only a library already in the process, which this one is.
    if (void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
      auto v = ask(dlsym(lib, "ncclGetVersion"));
      dlclose(lib);
      if (v) return v;
    }
  }
  return ask(dlsym(RTLD_DEFAULT, "ncclGetVersion"));
}

}  // namespace autotune::plugin
