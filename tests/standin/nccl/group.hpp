#pragma once
// ncclGroupStart / ncclGroupEnd as NCCL defines them, per thread: inside a group, communicator creations
// (ncclCommInitRank, ncclCommSplit) and collectives are collected and run at the outermost ncclGroupEnd:
// the creations first and concurrently (one thread that drives several GPUs must create their
// communicators together, or the first would wait for ranks that never come), then the collectives in call
// order. An error inside the group is returned by that call and again by ncclGroupEnd, which then runs
// nothing. Thread-local; nothing is shared between threads.

#include <nccl.h>

#include <functional>

namespace autotune::standin {

using Deferred = std::function<ncclResult_t()>;

bool in_group();
void group_start();
// Returns ncclInvalidUsage for an End without a Start.
ncclResult_t group_end();
// Runs `fn` now outside a group, else at ncclGroupEnd (creations concurrently, before any collective).
ncclResult_t run_or_defer_creation(Deferred fn);
ncclResult_t run_or_defer_collective(Deferred fn);
// An error detected while the call was made inside a group: ncclGroupEnd returns it too.
ncclResult_t group_error(ncclResult_t r);

}  // namespace autotune::standin
