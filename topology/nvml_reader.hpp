#pragma once
// NVML as the live probe asks it (dlopen of libnvidia-ml.so.1, prototypes declared here, as NCCL does):
// NVLink state and remote ends for the topology, and on request the health readings of every GPU and
// link. Used by the real SystemReader only; tests replace the whole reader.

#include "topology/system_reader.hpp"

namespace autotune::topology::detail {

LibraryAnswer<NvmlGpu> read_nvml(const NvmlRequest& request);

}  // namespace autotune::topology::detail
