#pragma once
// A stand-in GPU's cudaDeviceProp, filled by field name so that the one function serves both layouts in use:
// CUDA 13's struct (the stand-in runtime's cudaGetDeviceProperties) and CUDA 12's, which real NCCL's Debian
// build passes (tests/realnccl/cuda12_runtime.cpp). Fields not set here are zero.

#include <cstdio>
#include <cstring>

#include "tests/standin/common/devices.hpp"

namespace autotune::standin {

// The opt-in shared memory per block NCCL sizes its kernels by: Hopper 227 KiB, Ampere 163 KiB, older 96 KiB.
inline int shared_memory_optin(int sm) {
  return sm >= 90 ? 227 << 10 : sm >= 80 ? 163 << 10 : 96 << 10;
}

template <class Prop>
void fill_device_properties(Prop* prop, const DeviceInfo& d) {
  *prop = Prop{};
  std::snprintf(prop->name, sizeof prop->name, "%s", d.name.c_str());
  std::memcpy(prop->uuid.bytes, d.uuid, sizeof d.uuid);
  prop->totalGlobalMem = d.memory_bytes;
  prop->sharedMemPerBlock = 48 << 10;
  prop->regsPerBlock = 65536;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->major = d.sm / 10;
  prop->minor = d.sm % 10;
  prop->multiProcessorCount = d.multiprocessors;
  prop->canMapHostMemory = 1;
  prop->concurrentKernels = 1;
  prop->pciBusID = d.pci_bus;
  prop->pciDeviceID = d.pci_device;
  prop->pciDomainID = d.pci_domain;
  prop->asyncEngineCount = 2;
  prop->unifiedAddressing = 1;
}

}  // namespace autotune::standin
