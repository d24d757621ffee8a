#pragma once
// The health readings the probe takes from sysfs and proc through the reader seam (so a recorded tree
// stands in for a node): NIC port counters and GID tables, network interfaces and routes, ACS on the PCIe
// switch ports GPUs and NICs sit behind, and the peer-memory files NCCL looks for. NVML's readings come
// with the library answers in live_probe.cpp.

#include "topology/model.hpp"
#include "topology/reader.hpp"
#include "topology/system_reader.hpp"

namespace autotune::topology::detail {

// Fills t.health and each port's health; records a "health" source saying what was read.
void read_sysfs_health(const SystemReader& reader, Topology& t, const LiveOptions& options);

}  // namespace autotune::topology::detail
