#pragma once
// Internal to the topology module: turns a loaded hwloc topology (live or from hwloc XML, I/O objects kept)
// into the model. GPUs are PCI devices of vendor 0x10de and class 0x03xx, numbered by their cuda<N> OS device
// where hwloc has one; NICs are OpenFabrics OS devices; NVLink comes from an NVLinkBandwidth distance matrix.

#include <hwloc.h>

#include "topology/model.hpp"

namespace autotune::topology::detail {

// Fills gpus, nics, nvswitches, numa_nodes and cpu facts. Does not touch sources or origin.
void fill_from_hwloc(hwloc_topology_t topology, Topology& out);

}  // namespace autotune::topology::detail
