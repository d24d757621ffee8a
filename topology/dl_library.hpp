#pragma once
// A library opened with dlopen and closed on scope exit, for the readers that ask the driver (CUDA, NVML)
// without linking it, so the probe runs on nodes without a driver. Not thread-safe (dlerror is per thread
// but the object is not meant to be shared).

#include <dlfcn.h>

#include <string>

namespace autotune::topology::detail {

class Library {
 public:
  explicit Library(const char* name) : handle_(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) {
      const char* e = dlerror();
      error_ = e ? e : "dlopen failed";
    }
  }
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  explicit operator bool() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  // nullptr when the library lacks the symbol (an older driver).
  template <typename F>
  F get(const char* symbol) const {
    return reinterpret_cast<F>(dlsym(handle_, symbol));
  }

 private:
  void* handle_;
  std::string error_;
};

}  // namespace autotune::topology::detail
