#pragma once
// What check runs on, made ready: the simulator (one probed node taken N times, --sim-fault's faults; every
// node's record is that node's, so its probe findings are the same on every node and the faults show only
// in what is measured) or the job this process belongs to (every node probes itself, the NCCL runner
// measures on the job's GPUs). Both measure each pass through measure::make_runner. Not thread-safe.

#include <functional>
#include <vector>

#include "check/check.hpp"
#include "measure/runner_factory.hpp"
#include "runners/process_group.hpp"

namespace autotune::check {

// `simulated`: a simulator's runner options (measure::simulated_runner_options): its node, nodes, faults,
// seed and noise; each pass adds its shape. Throws InputError for a job the simulator cannot model (no node
// or GPU, nodes < 1, a fault on a node or device it does not have), before anything is measured.
CheckContext simulated_context(const measure::RunnerOptions& simulated);

// This node as its live probe sees it (health readings on), with the host name.
NodeRecord live_node_record();

// The job's processes, every one of which calls this (a collective): each node's record from its first
// process (`probe_this_node` runs there), the ranks per node from the job (one process alone drives its
// node's GPUs). `max_bytes` sizes the NCCL runner's buffers once; `watchdog_scale` multiplies its hang bound
// (tune passes its own, so that the health pass is never held to a tighter bound than what it gates).
CheckContext job_context(const runners::ProcessGroup& processes,
                         const std::function<NodeRecord()>& probe_this_node, uint64_t max_bytes,
                         double watchdog_scale = 1.0);

}  // namespace autotune::check
