#pragma once
// Every node's own probe, on every process of a job: the first process of each node (local rank 0) probes
// its node, and the records travel as probe JSON (`probe --format json`, health readings included) to every
// process, in node order. Ranks must be placed node by node (rank = node x ranks per node + local rank),
// as srun and mpirun place them by default and as the NCCL runner requires. A collective: every process of
// the job calls it, from one thread.

#include <functional>
#include <vector>

#include "check/check.hpp"
#include "runners/process_group.hpp"

namespace autotune::check {

// Throws std::runtime_error when the ranks are not placed node by node or the nodes differ in ranks, and
// InputError when a node's record cannot be read back.
std::vector<NodeRecord> gather_node_records(const runners::ProcessGroup& processes,
                                            const std::function<NodeRecord()>& probe_this_node);

}  // namespace autotune::check
