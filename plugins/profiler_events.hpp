#pragma once
// The profiler half's per-event work: a Coll event takes a slot from a fixed pool (what it is about: shape,
// collective, size bucket, the algorithm, protocol and channels NCCL ran), each KernelCh event of it a
// channel slot (its GPU start), and when as many channels stopped as the Coll event said, the collective's
// GPU time (the longest channel's stop - start) goes into the process's telemetry::Table and both slots are
// free again. Nothing here allocates, locks or logs; every function is noexcept and accepts any handle NCCL
// passes back, including null and handles of events it never asked for. A collective whose channels never
// all report keeps its slot; when the pool is exhausted, new collectives are counted as dropped.
// Thread-safe: Coll events come on the launching thread, KernelCh events on NCCL's proxy thread.

#include <cstddef>
#include <cstdint>

#include "nccl/profiler_abi.h"

namespace autotune::plugin::profiler {

// What the profiler half asks NCCL for: Coll events and, for their GPU time, KernelCh events (which in NCCL
// also turn on GroupApi, CollApi and Group events: those get a null handle and cost one compare each).
inline constexpr int kActivationMask = ncclProfileColl | ncclProfileKernelCh;

// One per communicator (the profiler context): what every event of it shares.
struct CommContext {
  uint64_t comm_id = 0;
  int nodes = 0;
  int ranks = 0;
  int rank = 0;
};

void start_event(const CommContext* comm, void** handle, const ncclProfilerEventDescr_v5_t* descr) noexcept;
void stop_event(void* handle) noexcept;
void record_state(void* handle, ncclProfilerEventState_t state,
                  const ncclProfilerEventStateArgs_v5_t* args) noexcept;

// Collectives not recorded because the pools were exhausted (or their description was not one we read).
uint64_t dropped() noexcept;

// NCCL's strings to ids, -1 when unknown ("RING" -> 1, "SIMPLE" -> 2, "AllReduce" -> 4).
int algorithm_id(const char* s) noexcept;
int protocol_id(const char* s) noexcept;
int collective_id(const char* s) noexcept;
// Bytes of one element of NCCL's datatype name ("ncclFloat32" -> 4); 0 when unknown.
size_t datatype_bytes(const char* s) noexcept;

}  // namespace autotune::plugin::profiler
