// CUDA runtime entry points for devices, versions and errors (see README.md for the list and what each
// does). Every function returns through returned() so that cudaGetLastError sees failures.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tests/standin/common/devices.hpp"
#include "tests/standin/cudart/device_properties.hpp"
#include "tests/standin/cudart/errors.hpp"
#include "tests/standin/cudart/memory.hpp"
#include "tests/standin/cudart/streams.hpp"

using autotune::standin::current_device;
using autotune::standin::DeviceInfo;
using autotune::standin::devices;
using autotune::standin::returned;

namespace {

const DeviceInfo* device_or_null(int d) {
  const auto& all = devices();
  return d >= 0 && static_cast<size_t>(d) < all.size() ? &all[static_cast<size_t>(d)] : nullptr;
}

cudaError_t missing_device() {
  return devices().empty() ? cudaErrorNoDevice : cudaErrorInvalidDevice;
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return returned(cudaErrorInvalidValue);
  *count = static_cast<int>(devices().size());
  return returned(*count == 0 ? cudaErrorNoDevice : cudaSuccess);
}

cudaError_t cudaSetDevice(int device) {
  if (!device_or_null(device)) return returned(missing_device());
  current_device() = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return returned(cudaErrorInvalidValue);
  if (devices().empty()) return returned(cudaErrorNoDevice);
  *device = current_device();
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return returned(cudaErrorInvalidValue);
  const DeviceInfo* d = device_or_null(device);
  if (!d) return returned(missing_device());
  autotune::standin::fill_device_properties(prop, *d);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return returned(cudaErrorInvalidValue);
  const DeviceInfo* d = device_or_null(device);
  if (!d) return returned(missing_device());
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
      *value = d->sm / 10;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = d->sm % 10;
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = d->multiprocessors;
      return cudaSuccess;
    case cudaDevAttrPciBusId:
      *value = d->pci_bus;
      return cudaSuccess;
    case cudaDevAttrPciDeviceId:
      *value = d->pci_device;
      return cudaSuccess;
    case cudaDevAttrPciDomainId:
      *value = d->pci_domain;
      return cudaSuccess;
    case cudaDevAttrWarpSize:
      *value = 32;
      return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:  // what NCCL sizes its kernels' shared memory by
      *value = autotune::standin::shared_memory_optin(d->sm);
      return cudaSuccess;
    case cudaDevAttrUnifiedAddressing:
    case cudaDevAttrCanUseHostPointerForRegisteredMem:
    case cudaDevAttrHostRegisterSupported:
    case cudaDevAttrMemoryPoolsSupported:
    case cudaDevAttrGPUDirectRDMASupported:
      *value = 1;
      return cudaSuccess;
    default:
      return returned(cudaErrorNotSupported);  // not modelled: say so rather than invent a value
  }
}

cudaError_t cudaDeviceGetPCIBusId(char* bus_id, int len, int device) {
  const DeviceInfo* d = device_or_null(device);
  if (!d) return returned(missing_device());
  if (bus_id == nullptr || len <= 0) return returned(cudaErrorInvalidValue);
  std::snprintf(bus_id, static_cast<size_t>(len), "%s", d->pci_bus_id.c_str());
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  if (devices().empty()) return returned(cudaErrorNoDevice);
  return returned(autotune::standin::synchronize_device(current_device()));
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  const DeviceInfo* d = device_or_null(current_device());
  if (!d) return returned(missing_device());
  if (free_bytes == nullptr || total_bytes == nullptr) return returned(cudaErrorInvalidValue);
  *total_bytes = d->memory_bytes;
  *free_bytes = d->memory_bytes - std::min(d->memory_bytes, autotune::standin::allocated_on(d->ordinal));
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return returned(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return returned(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

const char* cudaGetErrorString(cudaError_t error) {
  return autotune::standin::error_string(error);
}
const char* cudaGetErrorName(cudaError_t error) {
  return autotune::standin::error_name(error);
}
cudaError_t cudaGetLastError(void) {
  return autotune::standin::take_last_error();
}
cudaError_t cudaPeekAtLastError(void) {
  return autotune::standin::peek_last_error();
}

}  // extern "C"
