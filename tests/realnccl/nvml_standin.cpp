// The stand-in NVML (libnvidia-ml.so.1) that real NCCL dlopens: the recorded node's GPUs as handles, their
// index, compute capability and P2P status. Links are read from the topology file NCCL is given
// (NCCL_TOPO_FILE names every GPU's NVLinks), so the NVLink queries say "not supported", as a driver without
// NVLink would; fabric, platform and field queries likewise. Confidential computing: off. NVML declares no
// header here; the prototypes are NVML's C ABI (NCCL declares them itself the same way).
#include <strings.h>
#include <cstddef>
#include <cstring>

#include "tests/standin/common/devices.hpp"

namespace {

using nvmlReturn = int;
constexpr nvmlReturn kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6;

using autotune::standin::DeviceInfo;
using Device = const DeviceInfo*;

struct FieldValue {  // nvmlFieldValue_t
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn status;
  unsigned long long value;
};

bool valid(Device d) {
  for (const auto& x : autotune::standin::devices())
    if (&x == d) return true;
  return false;
}

}  // namespace

extern "C" {

nvmlReturn nvmlInit_v2() {
  return kSuccess;
}
nvmlReturn nvmlInit() {
  return kSuccess;
}
nvmlReturn nvmlShutdown() {
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn r) {
  switch (r) {
    case kSuccess:
      return "Success";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kNotFound:
      return "Not Found";
    default:
      return "Unknown Error";
  }
}

nvmlReturn nvmlDeviceGetCount_v2(unsigned* count) {
  if (count == nullptr) return kInvalidArgument;
  *count = static_cast<unsigned>(autotune::standin::devices().size());
  return kSuccess;
}
nvmlReturn nvmlDeviceGetCount(unsigned* count) {
  return nvmlDeviceGetCount_v2(count);
}

nvmlReturn nvmlDeviceGetHandleByIndex_v2(unsigned index, Device* device) {
  const auto& all = autotune::standin::devices();
  if (device == nullptr || index >= all.size()) return kInvalidArgument;
  *device = &all[index];
  return kSuccess;
}
nvmlReturn nvmlDeviceGetHandleByIndex(unsigned index, Device* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, Device* device) {
  if (bus_id == nullptr || device == nullptr) return kInvalidArgument;
  for (const auto& d : autotune::standin::devices())
    if (strcasecmp(d.pci_bus_id.c_str(), bus_id) == 0 ||
        (std::strlen(bus_id) == 12 && strcasecmp(d.pci_bus_id.c_str() + 4, bus_id + 4) == 0 &&
         std::strncmp(bus_id, "0000", 4) == 0)) {
      *device = &d;
      return kSuccess;
    }
  return kNotFound;
}
nvmlReturn nvmlDeviceGetHandleByPciBusId(const char* bus_id, Device* device) {
  return nvmlDeviceGetHandleByPciBusId_v2(bus_id, device);
}

nvmlReturn nvmlDeviceGetIndex(Device d, unsigned* index) {
  if (!valid(d) || index == nullptr) return kInvalidArgument;
  *index = static_cast<unsigned>(d->ordinal);
  return kSuccess;
}

nvmlReturn nvmlDeviceGetCudaComputeCapability(Device d, int* major, int* minor) {
  if (!valid(d) || major == nullptr || minor == nullptr) return kInvalidArgument;
  *major = d->sm / 10;
  *minor = d->sm % 10;
  return kSuccess;
}

// Every GPU pair of a stand-in node can do P2P reads, writes and atomics (NVLink through NVSwitches).
nvmlReturn nvmlDeviceGetP2PStatus(Device a, Device b, int, int* status) {
  if (!valid(a) || !valid(b) || status == nullptr) return kInvalidArgument;
  *status = 0;  // NVML_P2P_STATUS_OK
  return kSuccess;
}

nvmlReturn nvmlDeviceGetNvLinkState(Device, unsigned, int*) {
  return kNotSupported;
}
nvmlReturn nvmlDeviceGetNvLinkRemotePciInfo_v2(Device, unsigned, void*) {
  return kNotSupported;
}
nvmlReturn nvmlDeviceGetNvLinkRemotePciInfo(Device, unsigned, void*) {
  return kNotSupported;
}
nvmlReturn nvmlDeviceGetNvLinkCapability(Device, unsigned, int, unsigned*) {
  return kNotSupported;
}
nvmlReturn nvmlDeviceGetGpuFabricInfoV(Device, void*) {
  return kNotSupported;
}
nvmlReturn nvmlDeviceGetPlatformInfo(Device, void*) {
  return kNotSupported;
}

nvmlReturn nvmlDeviceGetFieldValues(Device d, int count, FieldValue* values) {
  if (!valid(d) || count < 0 || (count > 0 && values == nullptr)) return kInvalidArgument;
  for (int i = 0; i < count; ++i) values[i].status = kNotSupported;
  return kSuccess;
}

// Confidential computing off: nvmlConfComputeSystemState_t (three unsigned) all zero.
nvmlReturn nvmlSystemGetConfComputeState(unsigned* state) {
  if (state == nullptr) return kInvalidArgument;
  std::memset(state, 0, 3 * sizeof(unsigned));
  return kSuccess;
}
// nvmlSystemConfComputeSettings_t: a version word, then four unsigned, all zero.
nvmlReturn nvmlSystemGetConfComputeSettings(unsigned* settings) {
  if (settings == nullptr) return kInvalidArgument;
  std::memset(settings + 1, 0, 4 * sizeof(unsigned));
  return kSuccess;
}

}  // extern "C"
