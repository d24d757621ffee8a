#include "tests/standin/nccl/p2p.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "tests/standin/nccl/collective.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/settings.hpp"

namespace autotune::standin {

namespace {

// A rank's index on its node: the rail it sends on.
int local_index(const CommState& c, int rank) {
  const int node = c.node_of[static_cast<size_t>(rank)];
  return static_cast<int>(std::count(c.node_of.begin(), c.node_of.begin() + rank, node));
}

sim::P2pTraffic direction_traffic(const CommState& c, const std::vector<P2pOp>& ops, bool send) {
  std::map<int, double> to_peer;
  for (const P2pOp& op : ops)
    if (op.send == send) to_peer[op.peer] += static_cast<double>(op.bytes);
  sim::P2pTraffic t;
  int off_rail = 0;
  for (const auto& [peer, bytes] : to_peer) {
    if (peer == c.rank) {
      t.local_bytes += bytes;
      continue;
    }
    t.per_peer = std::max(t.per_peer, bytes);
    if (c.node_of[static_cast<size_t>(peer)] == c.node_of[static_cast<size_t>(c.rank)]) {
      ++t.intra_peers;
    } else {
      ++t.net_peers;
      off_rail += local_index(c, peer) != c.local_rank ? 1 : 0;
    }
  }
  t.off_rail_share = t.net_peers > 0 ? static_cast<double>(off_rail) / t.net_peers : 0.0;
  return t;
}

void ring(SharedSegment& seg, int rank) {
  seg.slot(rank).doorbell.fetch_add(1, std::memory_order_release);
  futex_wake(seg.slot(rank).doorbell);
}

// One transfer's progress through its lane (p2p.hpp).
struct Transfer {
  P2pOp op;
  enum class Stage { announce, handshake, moving, done } stage = Stage::announce;
  uint32_t seq = 0;  // the lane's transfer number
  size_t moved = 0;
};

class Engine {
 public:
  Engine(CommState& c, const std::vector<P2pOp>& ops, double ready_us, double duration_us)
      : c_(c), seg_(*c.segment), ready_us_(ready_us), duration_us_(duration_us), end_us_(ready_us) {
    for (const P2pOp& op : ops) transfers_.push_back(Transfer{op});
  }

  // Returns false when it must not go on (a mismatch, an abort, a failed peer).
  bool run() {
    int idle = 0;
    while (!finished()) {
      const uint32_t bell = seg_.slot(c_.rank).doorbell.load(std::memory_order_acquire);
      const bool progressed = pass();
      if (failed_) return false;
      if (progressed) {
        idle = 0;
        continue;
      }
      if (c_.should_stop()) return false;
      // A short spin first: on a busy host the peer usually answers within microseconds.
      if (++idle < 64)
        std::this_thread::yield();
      else
        futex_wait(seg_.slot(c_.rank).doorbell, bell, std::chrono::milliseconds(20));
    }
    return true;
  }
  double end_us() const { return end_us_; }

 private:
  bool finished() const {
    return std::all_of(transfers_.begin(), transfers_.end(),
                       [](const Transfer& t) { return t.stage == Transfer::Stage::done; });
  }

  // Steps the first unfinished transfer of each lane (a lane's transfers go in call order).
  bool pass() {
    bool progressed = false;
    std::set<std::pair<bool, int>> busy;
    for (Transfer& t : transfers_) {
      if (t.stage == Transfer::Stage::done || !busy.insert({t.op.send, t.op.peer}).second) continue;
      while (!failed_ && t.stage != Transfer::Stage::done && step(t)) progressed = true;
    }
    return progressed;
  }

  P2pLane& lane(const Transfer& t) {
    return t.op.send ? seg_.lane(c_.rank, t.op.peer) : seg_.lane(t.op.peer, c_.rank);
  }

  bool step(Transfer& t) {
    switch (t.stage) {
      case Transfer::Stage::announce:
        return announce(t);
      case Transfer::Stage::handshake:
        return handshake(t);
      case Transfer::Stage::moving:
        return t.op.send ? post(t) : take(t);
      case Transfer::Stage::done:
        break;
    }
    return false;
  }

  bool announce(Transfer& t) {
    P2pLane& l = lane(t);
    // A sender waits until the lane's last transfer is consumed: the receiver has read its header by then.
    if (t.op.send && l.acked.load(std::memory_order_acquire) != l.posted.load(std::memory_order_acquire))
      return false;
    const P2pHeader mine{t.op.bytes, ready_us_, duration_us_};
    std::atomic<uint32_t>& seq = t.op.send ? l.send_seq : l.recv_seq;
    t.seq = seq.load(std::memory_order_relaxed);
    (t.op.send ? l.send : l.recv) = mine;
    seq.store(t.seq + 1, std::memory_order_release);
    ring(seg_, t.op.peer);
    t.stage = Transfer::Stage::handshake;
    return true;
  }

  bool handshake(Transfer& t) {
    P2pLane& l = lane(t);
    std::atomic<uint32_t>& theirs = t.op.send ? l.recv_seq : l.send_seq;
    if (theirs.load(std::memory_order_acquire) <= t.seq) return false;
    const P2pHeader peer = t.op.send ? l.recv : l.send;
    if (peer.bytes != t.op.bytes) {
      const int from = t.op.send ? c_.rank : t.op.peer, to = t.op.send ? t.op.peer : c_.rank;
      const uint64_t sent = t.op.send ? t.op.bytes : peer.bytes,
                     received = t.op.send ? peer.bytes : t.op.bytes;
      c_.set_async_error(ncclInvalidUsage, "ranks disagree: rank " + std::to_string(from) + " sends " +
                                               std::to_string(sent) + " bytes to rank " + std::to_string(to) +
                                               ", which receives " + std::to_string(received));
      failed_ = true;
      return false;
    }
    end_us_ =
        std::max(end_us_, std::max(ready_us_, peer.ready_us) + std::max(duration_us_, peer.duration_us));
    t.stage = Transfer::Stage::moving;
    return true;
  }

  bool post(Transfer& t) {
    P2pLane& l = lane(t);
    if (l.acked.load(std::memory_order_acquire) != l.posted.load(std::memory_order_relaxed)) return false;
    const size_t len = std::min(seg_.p2p_slot_bytes(), t.op.bytes - t.moved);
    std::memcpy(seg_.p2p_slot(c_.rank, t.op.peer), t.op.buffer + t.moved, len);
    l.chunk_bytes = len;
    l.posted.fetch_add(1, std::memory_order_release);
    ring(seg_, t.op.peer);
    t.moved += len;
    if (t.moved == t.op.bytes) t.stage = Transfer::Stage::done;
    return true;
  }

  bool take(Transfer& t) {
    P2pLane& l = lane(t);
    if (l.posted.load(std::memory_order_acquire) == l.acked.load(std::memory_order_relaxed)) return false;
    const size_t len = l.chunk_bytes;
    std::memcpy(t.op.buffer + t.moved, seg_.p2p_slot(t.op.peer, c_.rank), len);
    l.acked.fetch_add(1, std::memory_order_release);
    ring(seg_, t.op.peer);
    t.moved += len;
    if (t.moved >= t.op.bytes) t.stage = Transfer::Stage::done;
    return true;
  }

  CommState& c_;
  SharedSegment& seg_;
  std::vector<Transfer> transfers_;
  double ready_us_, duration_us_, end_us_;
  bool failed_ = false;
};

}  // namespace

double p2p_duration_us(const CommState& c, const std::vector<P2pOp>& ops) {
  return std::max(c.tuning->p2p_time_us(direction_traffic(c, ops, true)),
                  c.tuning->p2p_time_us(direction_traffic(c, ops, false)));
}

ncclResult_t launch_p2p(const std::shared_ptr<CommState>& comm, cudaStream_t stream, std::vector<P2pOp> ops) {
  if (comm->async_error() != ncclSuccess) return comm->async_error();
  if (ops.empty()) return ncclSuccess;
  const double duration = p2p_duration_us(*comm, ops);
  if (cudaError_t e = cuda_ext::enqueue(stream, std::make_shared<P2pWork>(comm, std::move(ops), duration));
      e != cudaSuccess) {
    STANDIN_WARN("Cuda failure '%s'", cudaGetErrorString(e));
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

double P2pWork::run(double start_us) noexcept {
  CommState& c = *comm_;
  c.running.fetch_add(1);
  double end = start_us;
  try {
    end = execute(start_us);
  } catch (const std::exception& e) {
    c.set_async_error(ncclInternalError, std::string("stand-in point-to-point: ") + e.what());
    c.hang_until_abort();
  }
  c.running.fetch_sub(1);
  return end;
}

double P2pWork::execute(double start_us) {
  CommState& c = *comm_;
  if (c.aborted.load() || c.destroyed.load()) return start_us;
  const ExclusiveRun exclusive(c, "two operations ran on one communicator at once (from two streams)");
  if (!exclusive.held()) return start_us;
  if (c.async_error() != ncclSuccess || injected_async_error(c)) {
    c.hang_until_abort();
    return start_us;
  }
  const Faults& faults = settings().faults;
  const bool slow = faults.slow_rank && *faults.slow_rank == c.rank;
  Engine engine(c, ops_, start_us + (slow ? (faults.slow_factor - 1.0) * duration_us_ : 0.0), duration_us_);
  if (!engine.run()) {
    c.hang_until_abort();
    return start_us;
  }
  return engine.end_us();
}

}  // namespace autotune::standin
