#pragma once
// The CUDA stand-in's GPUs: those of the recorded node (common/node_topology.hpp), filtered and renumbered by
// CUDA_VISIBLE_DEVICES as CUDA does (a comma list of ordinals; the list ends at the first entry that is not a
// visible ordinal), and each thread's current device. The list is read once and immutable; the current
// device is per thread, as in CUDA.

#include <cstddef>
#include <string>
#include <vector>

#include "topology/model.hpp"

namespace autotune::standin {

struct DeviceInfo {
  int ordinal = 0;  // as the program sees it (after CUDA_VISIBLE_DEVICES)
  std::string name;
  std::string pci_bus_id;  // "0000:19:00.0"
  int pci_domain = 0, pci_bus = 0, pci_device = 0;
  int sm = 90;              // major * 10 + minor
  size_t memory_bytes = 0;  // what cudaMalloc may hand out in all
  int multiprocessors = 0;
  unsigned char uuid[16] = {};
};

const std::vector<DeviceInfo>& devices();
// The calling thread's current device (0 until cudaSetDevice).
int& current_device();

}  // namespace autotune::standin
