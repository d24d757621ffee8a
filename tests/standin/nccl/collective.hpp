#pragma once
// One collective as GPU work on a stream (the CUDA stand-in's StreamWork): when the stream reaches it, every
// rank of the communicator meets at the segment's data barrier with a descriptor of what it is running;
// the descriptors must agree (collective, count, datatype, op, root, and the algorithm, protocol and channels
// each rank's tuning reached), else the collective fails on every rank with each side named ("ranks
// disagree: rank 0 ring/ll, rank 1 tree/ll") where real NCCL would hang or corrupt. The data really moves
// and reduces, through the staging buffers, in rounds; the virtual clock is charged the simulator's time for
// the choice from the latest rank's arrival. Faults (settings.hpp) hang it, corrupt it, fail it
// asynchronously or slow one rank. A collective that cannot complete stays incomplete until its
// communicator is aborted, as on a GPU.

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <optional>

#include "tests/standin/cudart/stream_work.hpp"
#include "tests/standin/nccl/comm.hpp"
#include "tests/standin/nccl/tuning.hpp"

namespace autotune::standin {

// ncclFunc_t's numbering: what the tuner and the descriptors use.
enum CollectiveId { kBroadcast = 0, kReduce = 1, kAllGather = 2, kReduceScatter = 3, kAllReduce = 4 };

struct CollectiveCall {
  int collective = kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // NCCL's count: per rank for AllGather's input and ReduceScatter's output
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
};

// Bytes this rank reads from `send` and writes to `recv` (0 where it does not touch it).
size_t send_bytes(const CollectiveCall& call, const CommState& comm);
size_t recv_bytes(const CollectiveCall& call, const CommState& comm);
// The tuner's nBytes: the whole buffer for AllGather and ReduceScatter.
size_t tuner_bytes(const CollectiveCall& call, int ranks);
const char* collective_name(int collective);  // NCCL's: "AllReduce"

// The injected asynchronous error (NCCL_STANDIN_FAULT_ASYNC_AFTER), counted over the collectives and
// point-to-point work of this process's fault rank: true when it fired on this operation (the communicator
// then carries it).
bool injected_async_error(CommState& c);

// What the profiler plugin hears of this collective (profiling.hpp): its Coll event's handle, taken at
// launch, or for captured work at each replay.
struct Profiled {
  ProfiledCall call;
  void* coll_event = nullptr;
  bool captured = false;
};

class CollectiveWork : public StreamWork {
 public:
  CollectiveWork(std::shared_ptr<CommState> comm, const CollectiveCall& call, const TunedChoice& choice,
                 const Profiled& profiled)
      : comm_(std::move(comm)), call_(call), choice_(choice), profiled_(profiled) {}
  double run(double start_us) noexcept override;

 private:
  double execute(double start_us);
  void describe(int parity, double ready_us);
  std::optional<double> agree(int parity);
  std::shared_ptr<CommState> comm_;
  CollectiveCall call_;
  TunedChoice choice_;
  Profiled profiled_;
  bool completed_ = false;  // this run reached its end (not stuck, not aborted)
};

}  // namespace autotune::standin
