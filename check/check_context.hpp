#pragma once
// What check runs on, made ready: the simulator (one probed node taken N times, --sim-fault's faults; every
// node's record is that node's, so its probe findings are the same on every node and the faults show only
// in what is measured) or the job this process belongs to (every node probes itself, the NCCL runner
// measures on the job's GPUs). Both measure each pass through measure::make_runner. Not thread-safe.

#include <functional>
#include <vector>

#include "check/check.hpp"
#include "runners/process_group.hpp"
#include "simulator/sim_fault.hpp"

namespace autotune::check {

struct SimulatedJob {
  topology::Topology node;
  int nodes = 1;
  std::vector<sim::SimFault> faults;
  uint64_t seed = 1;
  double noise = 0.03;
};

// Throws InputError for a job the simulator cannot model (no GPU, nodes < 1, a fault on a node or device
// it does not have), before anything is measured.
CheckContext simulated_context(const SimulatedJob& job);

// This node as its live probe sees it (health readings on), with the host name.
NodeRecord live_node_record();

// The job's processes, every one of which calls this (a collective): each node's record from its first
// process (`probe_this_node` runs there), the ranks per node from the job (one process alone drives its
// node's GPUs). `max_bytes` sizes the NCCL runner's buffers once.
CheckContext job_context(const runners::ProcessGroup& processes,
                         const std::function<NodeRecord()>& probe_this_node, uint64_t max_bytes);

}  // namespace autotune::check
