#pragma once
// The communicator handles a program holds (ncclComm_t) and the state behind each: a handle is valid from
// its creation until ncclCommDestroy/Abort, and a stale or made-up one is refused rather than followed.
// Thread-safe.

#include <nccl.h>

#include <memory>

#include "tests/standin/nccl/comm.hpp"

namespace autotune::standin {

ncclComm_t make_handle(std::shared_ptr<CommState> state);
// The state behind a live handle; null for anything else.
std::shared_ptr<CommState> lookup(ncclComm_t handle);
// Ends the handle; returns its state (null when it was not live).
std::shared_ptr<CommState> release_handle(ncclComm_t handle);

}  // namespace autotune::standin
