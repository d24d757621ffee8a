#pragma once
// A communicator of the NCCL stand-in: its rank among `ranks`, its device, the shared segment it meets its
// peers in (shared_segment.hpp), where every rank runs (nodes told apart by NCCL's host identity:
// NCCL_HOSTID, else the host name and boot id), its tuning (tuning.hpp), and its state: aborted, the first
// asynchronous error, and whether a collective is running on it.
// Creation follows ncclCommInitRank: join the segment named by the unique id, wait (up to
// NCCL_STANDIN_INIT_TIMEOUT) until every rank has joined (a rank that fails before that fails every rank's
// wait promptly, with its reason), then set up alone, as NCCL does: a rank that fails after meeting the
// others (its tuner's init, an injected fault) fails alone, and the others' creation succeeds.
// Host-side calls on one communicator must come from one thread at a time (as NCCL requires); its
// collectives run on stream workers, one at a time (enforced: two at once is an error).

#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/standin/nccl/profiling.hpp"
#include "tests/standin/nccl/shared_segment.hpp"
#include "tests/standin/nccl/tuning.hpp"

namespace autotune::standin {

class CommState {
 public:
  int rank = 0;
  int ranks = 1;
  int device = 0;
  uint64_t nonce = 0;  // of the unique id
  std::shared_ptr<SharedSegment> segment;
  int nodes = 1;
  std::vector<int> node_of;  // per rank
  int local_rank = 0, local_ranks = 1, min_local_ranks = 1, max_local_ranks = 1;
  std::unique_ptr<CommProfiling> profiling;  // created before the tuning, as NCCL inits the profiler first
  std::unique_ptr<CommTuning> tuning;

  uint64_t host_steps = 0;  // host-barrier steps since creation (split slots alternate by parity)
  uint64_t splits = 0;

  std::atomic<bool> busy{false};  // an operation is running (ExclusiveRun)
  uint64_t rounds = 0;            // data-barrier rounds run (staging alternates by parity)
  uint64_t sequence = 0;          // collectives run
  std::atomic<bool> aborted{false};
  std::atomic<bool> destroyed{false};
  std::atomic<int> running{0};

  // The first error wins; it is also logged as a WARN (and so becomes ncclGetLastError's text).
  void set_async_error(ncclResult_t code, const std::string& why);
  ncclResult_t async_error() const { return static_cast<ncclResult_t>(async_error_.load()); }
  // True when waiting for peers is pointless: aborted or destroyed here, failed or aborted by a peer, or a
  // peer's process gone. A remote cause becomes this rank's asynchronous error (ncclRemoteError).
  bool should_stop();
  // What a collective that cannot complete does: nothing, until the communicator is aborted or destroyed.
  void hang_until_abort() const;

 private:
  std::atomic<int> async_error_{ncclSuccess};
  std::mutex mutex_;
  std::atomic<int64_t> next_liveness_check_{0};
};

// One operation at a time on a communicator, as on a GPU: held for the operation's run. A second operation
// at once (work from two streams) fails the communicator asynchronously and waits, as the GPU would hang,
// until it is aborted; held() is then false and the operation runs nothing.
class ExclusiveRun {
 public:
  ExclusiveRun(CommState& comm, const char* what);
  ~ExclusiveRun();
  ExclusiveRun(const ExclusiveRun&) = delete;
  ExclusiveRun& operator=(const ExclusiveRun&) = delete;
  bool held() const { return held_; }

 private:
  CommState& comm_;
  bool held_ = false;
};

// A fresh unique id: names a segment no one has created yet.
void new_unique_id(ncclUniqueId* id);
// Whether `id` came from ncclGetUniqueId of a stand-in (else ncclCommInitRank says so).
bool is_standin_id(const ncclUniqueId& id);

ncclResult_t init_comm(const ncclUniqueId& id, int ranks, int rank, int device,
                       std::shared_ptr<CommState>* out);
// ncclCommSplit: a host step of the parent in which every rank gives its colour and key, then the new
// communicator is created like any other. *out is null for NCCL_SPLIT_NOCOLOR.
ncclResult_t split_comm(CommState& parent, int color, int key, std::shared_ptr<CommState>* out);
// ncclCommAbort: stops the collectives running on it (here and, through the segment, on its peers).
void abort_comm(CommState& c);
// ncclCommDestroy: waits for the collective running on it, then finalizes its tuning.
void destroy_comm(CommState& c);

}  // namespace autotune::standin
