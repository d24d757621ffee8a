#pragma once
// Point-to-point work (ncclSend / ncclRecv, and ncclAlltoAll, ncclGather, ncclScatter built on them): the
// sends and receives one rank's group put on one communicator and stream, run as one piece of GPU work, as
// NCCL fuses them. Each transfer is matched with its peer's in call order per ordered pair of ranks, through
// that pair's lane in the shared segment (shared_segment.hpp): both sides announce it (bytes, the virtual
// time they reached it, what their traffic costs), a difference in size fails both ("rank 0 sends 400 bytes
// to rank 1, which receives 800") where real NCCL would corrupt or hang, then the data moves chunk by chunk
// through the lane's slot. The rank progresses all its transfers at once (so any pattern NCCL accepts in one
// group completes), sleeping on its doorbell when none can move. The virtual clock is charged the simulator's
// point-to-point model for this rank's traffic (sim::p2p_traffic_time_us: its peers inside and across nodes,
// the bytes to each), from the later of its own and each peer's arrival, by the longer of the two charges.
// No tuner call, as in NCCL. Faults: the asynchronous error and the slow rank apply (hang and wrong data name
// an algorithm and protocol, which point-to-point work has none of). Work that cannot complete stays
// incomplete until its communicator is aborted.

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "tests/standin/cudart/stream_work.hpp"
#include "tests/standin/nccl/comm.hpp"

namespace autotune::standin {

struct P2pOp {
  bool send = true;
  char* buffer = nullptr;  // the send buffer (only read) or the receive buffer
  size_t bytes = 0;        // > 0: a zero-count call is nothing
  int peer = 0;
};

// What this rank's ops cost in the simulator's truth: the busier direction of its traffic.
double p2p_duration_us(const CommState& c, const std::vector<P2pOp>& ops);

// Puts the ops on the stream as one piece of work (ops empty: nothing). The arguments are checked already.
ncclResult_t launch_p2p(const std::shared_ptr<CommState>& comm, cudaStream_t stream, std::vector<P2pOp> ops);

class P2pWork : public StreamWork {
 public:
  P2pWork(std::shared_ptr<CommState> comm, std::vector<P2pOp> ops, double duration_us)
      : comm_(std::move(comm)), ops_(std::move(ops)), duration_us_(duration_us) {}
  double run(double start_us) noexcept override;

 private:
  double execute(double start_us);
  std::shared_ptr<CommState> comm_;
  std::vector<P2pOp> ops_;
  double duration_us_;
};

}  // namespace autotune::standin
