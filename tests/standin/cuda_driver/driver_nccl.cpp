// The stand-in driver's part that real NCCL asks for (tests/realnccl): the entry-point query NCCL finds the
// driver API through (cuGetProcAddress, answered from this library's own exports), contexts (one per device,
// the runtime's current device being the current context), and kernel launches, which are accepted and do
// nothing (no device code runs here). Virtual memory, multicast and stream memory operations are absent:
// they say "not supported", as an older driver would, and NCCL then keeps to cudaMalloc'ed buffers (the
// realnccl tests also set NCCL_CUMEM_ENABLE=0). Declared with the names and signatures NCCL asks for by name
// (cuCtxCreate is the v2 call, cuGetProcAddress the v2 one), without cuda.h, whose macros rename them.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>

#include "tests/standin/common/devices.hpp"

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kInvalidContext = 201, kNotFound = 500,
                   kNotSupported = 801;

// One context per device: a context is the address of its device's slot.
constexpr int kMaxDevices = 64;
char contexts[kMaxDevices];

void* context_of(int device) {
  return device >= 0 && device < kMaxDevices ? &contexts[device] : nullptr;
}
int device_of(void* context) {
  const char* c = static_cast<const char*>(context);
  return c >= contexts && c < contexts + kMaxDevices ? static_cast<int>(c - contexts) : -1;
}

// The runtime's current device, where a runtime is in the process (it sets the current context, as CUDA's
// does); this library's own notion otherwise.
int current_device() {
  using GetDevice = int (*)(int*);
  static auto get = reinterpret_cast<GetDevice>(dlsym(RTLD_DEFAULT, "cudaGetDevice"));
  int d = 0;
  if (get && get(&d) == 0) return d;
  return autotune::standin::current_device();
}
void set_current_device(int device) {
  using SetDevice = int (*)(int);
  static auto set = reinterpret_cast<SetDevice>(dlsym(RTLD_DEFAULT, "cudaSetDevice"));
  if (set) set(device);
  autotune::standin::current_device() = device;
}

void* self() {
  static void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return handle;
}

}  // namespace

extern "C" {

CUresult cuGetProcAddress(const char* symbol, void** fn, int, uint64_t, int* status) {
  if (symbol == nullptr || fn == nullptr) return kInvalidValue;
  *fn = self() ? dlsym(self(), symbol) : nullptr;
  if (status) *status = *fn ? 0 : 1;  // CU_GET_PROC_ADDRESS_SUCCESS, ..._SYMBOL_NOT_FOUND
  return *fn ? kSuccess : kNotFound;
}

CUresult cuCtxGetCurrent(void** context) {
  if (context == nullptr) return kInvalidValue;
  *context = context_of(current_device());
  return kSuccess;
}
CUresult cuCtxSetCurrent(void* context) {
  if (context == nullptr) return kSuccess;
  const int d = device_of(context);
  if (d < 0) return kInvalidContext;
  set_current_device(d);
  return kSuccess;
}
CUresult cuCtxGetDevice(int* device) {
  if (device == nullptr) return kInvalidValue;
  *device = current_device();
  return kSuccess;
}
CUresult cuCtxCreate(void** context, unsigned, int device) {
  if (context == nullptr || device < 0 || static_cast<size_t>(device) >= autotune::standin::devices().size())
    return kInvalidValue;
  *context = context_of(device);
  return kSuccess;
}
CUresult cuCtxDestroy(void* context) {
  return device_of(context) >= 0 ? kSuccess : kInvalidContext;
}

CUresult cuGetErrorName(CUresult error, const char** text) {
  if (text == nullptr) return kInvalidValue;
  *text = error == kSuccess ? "CUDA_SUCCESS" : "CUDA_ERROR";
  return kSuccess;
}

// Kernels are NCCL's device code: a launch is accepted and runs nothing.
CUresult cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                        void**, void**) {
  return kSuccess;
}
CUresult cuLaunchKernelEx(const void*, void*, void**, void**) {
  return kSuccess;
}

CUresult cuPointerGetAttribute(void*, int, uintptr_t) {
  return kNotSupported;
}
CUresult cuMemGetAddressRange(uintptr_t*, size_t*, uintptr_t) {
  return kNotSupported;
}
CUresult cuStreamWaitValue32(void*, uintptr_t, uint32_t, unsigned) {
  return kNotSupported;
}
CUresult cuStreamWriteValue32(void*, uintptr_t, uint32_t, unsigned) {
  return kNotSupported;
}
CUresult cuStreamWaitValue64(void*, uintptr_t, uint64_t, unsigned) {
  return kNotSupported;
}
CUresult cuStreamWriteValue64(void*, uintptr_t, uint64_t, unsigned) {
  return kNotSupported;
}
CUresult cuStreamBatchMemOp(void*, unsigned, void*, unsigned) {
  return kNotSupported;
}

}  // extern "C"
