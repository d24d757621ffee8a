// The stand-in CUDA driver (libcuda.so.1): the device queries the probe makes through dlopen
// (topology/real_system_reader.cpp), answered from the recorded node's GPUs as the runtime stand-in lists
// them, so that `probe`, `check` and tune's health gate see the same GPUs the runner measures on. Only what
// the project calls is here; everything else is absent, as in a driver that lacks it.

#include <cuda.h>

#include <cstring>

#include "tests/standin/common/devices.hpp"
#include "tests/standin/common/node_topology.hpp"

namespace {

using autotune::standin::DeviceInfo;
using autotune::standin::devices;

bool initialised = false;

// The node's GPUs reach each other through NVSwitches: what NVLS (CUDA multicast) needs on Hopper and later.
bool node_has_nvswitch() {
  for (const auto& g : autotune::standin::node_topology().gpus)
    for (const auto& l : g.nvlinks)
      if (l.remote == autotune::topology::NvLinkRemote::nvswitch) return true;
  return false;
}

const DeviceInfo* device_of(CUdevice d) {
  const auto& list = devices();
  return d >= 0 && static_cast<size_t>(d) < list.size() ? &list[static_cast<size_t>(d)] : nullptr;
}

int attribute_of(const DeviceInfo& d, CUdevice_attribute a, bool* known) {
  *known = true;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      return d.pci_bus;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      return d.pci_device;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      return d.pci_domain;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return d.sm / 10;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return d.sm % 10;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return d.multiprocessors;
    case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
      return 1;
    // What the stand-in driver lacks (driver_nccl.cpp): virtual memory management and its handle kinds,
    // and stream memory operations. NCCL reads these and keeps to cudaMalloc'ed buffers and host-side waits.
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR:
      return 0;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED:
      return d.sm >= 90 && node_has_nvswitch() ? 1 : 0;
    default:
      *known = false;
      return 0;
  }
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  initialised = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(devices().size());
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (device_of(ordinal) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  const DeviceInfo* d = device_of(device);
  if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::strncpy(name, d->name.c_str(), static_cast<size_t>(length) - 1);
  name[length - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
  const DeviceInfo* d = device_of(device);
  if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  bool known = false;
  const int v = attribute_of(*d, attribute, &known);
  if (!known) return CUDA_ERROR_INVALID_VALUE;
  *value = v;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS:
      *text = "no error";
      break;
    case CUDA_ERROR_INVALID_VALUE:
      *text = "invalid argument";
      break;
    case CUDA_ERROR_NOT_INITIALIZED:
      *text = "initialization error";
      break;
    case CUDA_ERROR_INVALID_DEVICE:
      *text = "invalid device ordinal";
      break;
    default:
      *text = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // extern "C"
