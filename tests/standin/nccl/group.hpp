#pragma once
// ncclGroupStart / ncclGroupEnd as NCCL defines them, per thread: inside a group, communicator creations
// (ncclCommInitRank, ncclCommSplit) and collectives are collected and run at the outermost ncclGroupEnd:
// the creations first and concurrently (one thread that drives several GPUs must create their
// communicators together, or the first would wait for ranks that never come), then the collectives in call
// order; the point-to-point operations of one communicator and stream are fused into one piece of work
// (p2p.hpp), launched where the first of them stood, as NCCL fuses a group's sends and receives. An error
// inside the group is returned by that call and again by ncclGroupEnd, which then runs
// nothing. Thread-local; nothing is shared between threads.

#include <nccl.h>

#include <functional>
#include <memory>

#include "tests/standin/nccl/p2p.hpp"

namespace autotune::standin {

using Deferred = std::function<ncclResult_t()>;

bool in_group();
void group_start();
// Returns ncclInvalidUsage for an End without a Start.
ncclResult_t group_end();
// Runs `fn` now outside a group, else at ncclGroupEnd (creations concurrently, before any collective).
ncclResult_t run_or_defer_creation(Deferred fn);
ncclResult_t run_or_defer_collective(Deferred fn);
// Launches `op` alone now outside a group, else adds it to the group's work for (comm, stream).
ncclResult_t run_or_defer_p2p(const std::shared_ptr<CommState>& comm, cudaStream_t stream, const P2pOp& op);
// An error detected while the call was made inside a group: ncclGroupEnd returns it too.
ncclResult_t group_error(ncclResult_t r);

}  // namespace autotune::standin
