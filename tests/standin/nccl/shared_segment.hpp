#pragma once
// The memory the ranks of one communicator share, across processes of this host: a POSIX shared-memory
// segment named after the unique id (created by whichever rank comes first, unlinked once all have joined),
// holding each rank's slot (who it is, where it runs, the descriptor of the collective it is in), two
// barriers (one for the collectives on the streams, one for host-side steps: creation, split), the staging
// buffers the data moves through, a lane and a slot per ordered pair of ranks for point-to-point transfers,
// and the communicator-wide failure state (which rank failed or aborted, and why). Barrier waits sleep on
// futexes and give up when told to (an abort, a failed peer). Thread-safe where the layout says so (atomics);
// each rank writes only its own slot and staging buffers.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace autotune::standin {

// What every rank says about the collective it is about to run, compared across ranks.
struct CollectiveDescriptor {
  uint64_t sequence = 0;  // the communicator's count of collectives, from 0
  int32_t collective = 0, datatype = 0, op = 0, root = 0;
  uint64_t count = 0;
  int32_t algorithm = -1, protocol = -1, channels = 0;
  int32_t pad = 0;
  double ready_us = 0.0;     // virtual time this rank reached it
  double duration_us = 0.0;  // what the simulator charges for the choice
};

struct RankSlot {
  std::atomic<int32_t> state;  // 0 empty, 1 joined
  int32_t pid;
  int32_t cuda_device;
  int32_t pad;
  uint64_t host_hash;
  char host[64];
  CollectiveDescriptor descriptor[2];  // by round parity
  int32_t color[2], key[2];            // ncclCommSplit's arguments, by host-step parity
  std::atomic<uint32_t> doorbell;      // bumped by a peer that moved a point-to-point lane towards this rank
};

// One half of a point-to-point transfer's handshake: what its side says before any data moves.
struct P2pHeader {
  uint64_t bytes;
  double ready_us;     // virtual time this side reached the transfer
  double duration_us;  // what the simulator charges this side's traffic
};

// The lane from one rank to another (to itself too): transfers in call order, one chunk in flight. The
// sender announces transfer k (its header, then send_seq = k + 1), the receiver likewise (recv_seq); each
// chunk is posted by the sender into the lane's slot and acknowledged by the receiver.
struct P2pLane {
  std::atomic<uint32_t> send_seq;
  std::atomic<uint32_t> recv_seq;
  std::atomic<uint32_t> posted;  // chunks written into the slot, ever
  std::atomic<uint32_t> acked;   // chunks the receiver has copied out, ever
  uint64_t chunk_bytes;          // the posted chunk's length
  P2pHeader send, recv;
};

struct Barrier {
  std::atomic<uint32_t> arrived;
  std::atomic<uint32_t> generation;
};

struct SegmentHeader {
  std::atomic<uint32_t> magic;  // stored last by the creator
  int32_t ranks;
  uint64_t stage_bytes;  // per rank and parity
  uint64_t total_bytes;
  std::atomic<uint32_t> joined;
  std::atomic<int32_t> failed_rank;   // -1: none (-2 while being claimed). The first rank that failed
  std::atomic<int32_t> aborted_rank;  // -1: none. The first rank that called ncclCommAbort
  char failure[512];                  // failed_rank's reason (written before failed_rank is set)
  Barrier data_barrier;
  Barrier host_barrier;
};

class SharedSegment {
 public:
  // Creates or opens the segment `name` for `ranks` ranks with `stage_bytes` of staging per rank (0: a size
  // from the rank count); waits until the creator has laid it out. Throws std::runtime_error with the reason
  // (another rank count, the deadline passed, no shared memory).
  static std::shared_ptr<SharedSegment> open(const std::string& name, int ranks, size_t stage_bytes,
                                             std::chrono::steady_clock::time_point deadline);
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  SegmentHeader& header() { return *header_; }
  RankSlot& slot(int rank);
  // Rank `rank`'s staging buffer for round parity `parity` (stage_bytes() long), and the buffer where it
  // leaves its share of a reduction for the others (as long).
  char* stage(int rank, int parity);
  char* result(int rank, int parity);
  size_t stage_bytes() const { return header_->stage_bytes; }
  // The point-to-point lane from `from` to `to` and its slot (p2p_slot_bytes() long).
  P2pLane& lane(int from, int to);
  char* p2p_slot(int from, int to);
  size_t p2p_slot_bytes() const;
  int ranks() const { return header_->ranks; }
  // Removes the name (the mapping stays): called once every rank has it open.
  void unlink();

  // Marks the communicator failed by `rank` with `why` (the first failure wins) and wakes every waiter.
  void fail(int rank, const std::string& why);
  // Why it failed: "rank R: reason"; empty when it has not.
  std::string failure() const;
  void wake_all();

 private:
  SharedSegment() = default;
  std::string name_;
  void* base_ = nullptr;
  size_t size_ = 0;
  SegmentHeader* header_ = nullptr;
  bool linked_ = true;
};

enum class WaitEnd { passed, stopped };

// Waits until every one of `parties` ranks arrived at the barrier, or `stop()` says to give up (polled at
// least every 20 ms). A stopped barrier is left inconsistent: its communicator is finished.
WaitEnd barrier_wait(Barrier& b, int parties, const std::function<bool()>& stop);

// Sleeps until *word != expected or `timeout` passed (futex, across processes).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::milliseconds timeout);
void futex_wake(std::atomic<uint32_t>& word);

}  // namespace autotune::standin
