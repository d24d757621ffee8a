#pragma once
// The communicators of one shape on a simulated job, every group at once, in runners/group_layout.hpp's
// order (the order the NCCL runner reports Measurement::group_times_us in): each group's cluster spans only
// its own nodes and its own block of every node's GPUs, so a fault slows only the groups that hold the sick
// device, while the groups of a node still share its NICs as their rails allow. Pure functions.

#include <vector>

#include "runners/process_setting.hpp"
#include "simulator/sim_cluster.hpp"

namespace autotune::sim {

// Throws InputError when the shape does not fit the job (runners::GroupLayout's refusals).
std::vector<SimCluster> group_clusters(const SimCluster& world, const runners::Scale& shape,
                                       int node_offset = 0, int local_offset = 0);

}  // namespace autotune::sim
