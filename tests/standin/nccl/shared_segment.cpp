#include "tests/standin/nccl/shared_segment.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace autotune::standin {

namespace {

constexpr uint32_t kMagic = 0x4e53544e;  // "NSTN"
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<int32_t>::is_always_lock_free,
              "the segment's atomics are shared between processes");

size_t slots_offset() {
  return (sizeof(SegmentHeader) + 63) / 64 * 64;
}
size_t stages_offset(int ranks) {
  return (slots_offset() + sizeof(RankSlot) * ranks + 4095) / 4096 * 4096;
}

constexpr size_t kBuffersPerRank = 4;  // staging and results, each by round parity

size_t lanes_offset(int ranks, size_t stage) {
  return stages_offset(ranks) + stage * kBuffersPerRank * static_cast<size_t>(ranks);
}
size_t p2p_slots_offset(int ranks, size_t stage) {
  return (lanes_offset(ranks, stage) + sizeof(P2pLane) * static_cast<size_t>(ranks) * ranks + 255) / 256 *
         256;
}
// Each rank's point-to-point slots together hold its staging (at least 256 bytes a peer), so that
// NCCL_STANDIN_STAGE_BYTES still bounds the memory per rank. Pages are backed only where a pair talks.
size_t p2p_slot_bytes_for(int ranks, size_t stage) {
  return std::max<size_t>(256, stage / static_cast<size_t>(std::max(1, ranks)) / 256 * 256);
}

// Small enough that many communicators fit, large enough that big collectives take few rounds.
// (Pages are only backed once touched: small collectives use a sliver of it.)
size_t stage_bytes_for(int ranks) {
  size_t bytes = (32u << 20) / static_cast<size_t>(std::max(1, ranks));
  return std::clamp<size_t>(bytes, 256u << 10, 4u << 20) / 256 * 256;
}

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

void lay_out(SegmentHeader* h, int ranks, size_t stage, size_t total) {
  h->ranks = ranks;
  h->stage_bytes = stage;
  h->total_bytes = total;
  h->joined.store(0);
  h->failed_rank.store(-1);
  h->aborted_rank.store(-1);
  h->data_barrier.arrived.store(0);
  h->data_barrier.generation.store(0);
  h->host_barrier.arrived.store(0);
  h->host_barrier.generation.store(0);
  h->magic.store(kMagic, std::memory_order_release);
}

}  // namespace

std::shared_ptr<SharedSegment> SharedSegment::open(const std::string& name, int ranks, size_t stage_bytes,
                                                   std::chrono::steady_clock::time_point deadline) {
  const size_t stage = stage_bytes > 0 ? stage_bytes / 256 * 256 : stage_bytes_for(ranks);
  const size_t total =
      p2p_slots_offset(ranks, stage) + p2p_slot_bytes_for(ranks, stage) * static_cast<size_t>(ranks) * ranks;
  bool creator = true;
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 && errno == EEXIST) {
    creator = false;
    fd = shm_open(name.c_str(), O_RDWR, 0600);
  }
  if (fd < 0) throw std::runtime_error(system_error("shm_open " + name));
  if (creator && ftruncate(fd, static_cast<off_t>(total)) != 0) {
    close(fd);
    shm_unlink(name.c_str());
    throw std::runtime_error(system_error("ftruncate " + name));
  }
  // A rank that opened before the creator sized it waits for the size, then for the layout.
  struct stat st {};
  while (!creator && fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) < sizeof(SegmentHeader)) {
    if (std::chrono::steady_clock::now() > deadline) {
      close(fd);
      throw std::runtime_error("the rank creating " + name + " never laid it out");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) throw std::runtime_error(system_error("mmap " + name));
  std::shared_ptr<SharedSegment> seg(new SharedSegment());
  seg->name_ = name;
  seg->base_ = base;
  seg->size_ = total;
  seg->header_ = static_cast<SegmentHeader*>(base);
  if (creator) {
    lay_out(seg->header_, ranks, stage, total);
  } else {
    while (seg->header_->magic.load(std::memory_order_acquire) != kMagic) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("the rank creating " + name + " never laid it out");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (seg->header_->ranks != ranks)
      throw std::runtime_error("this rank was given " + std::to_string(ranks) +
                               " ranks, the communicator was created for " +
                               std::to_string(seg->header_->ranks));
  }
  return seg;
}

SharedSegment::~SharedSegment() {
  if (base_) munmap(base_, size_);
}

RankSlot& SharedSegment::slot(int rank) {
  return reinterpret_cast<RankSlot*>(static_cast<char*>(base_) + slots_offset())[rank];
}

char* SharedSegment::stage(int rank, int parity) {
  return static_cast<char*>(base_) + stages_offset(header_->ranks) +
         (static_cast<size_t>(rank) * kBuffersPerRank + static_cast<size_t>(parity)) * header_->stage_bytes;
}

char* SharedSegment::result(int rank, int parity) {
  return stage(rank, parity) + 2 * header_->stage_bytes;
}

P2pLane& SharedSegment::lane(int from, int to) {
  const size_t n = static_cast<size_t>(header_->ranks);
  return reinterpret_cast<P2pLane*>(
      static_cast<char*>(base_) +
      lanes_offset(header_->ranks, stage_bytes()))[static_cast<size_t>(from) * n + static_cast<size_t>(to)];
}

size_t SharedSegment::p2p_slot_bytes() const {
  return p2p_slot_bytes_for(header_->ranks, header_->stage_bytes);
}

char* SharedSegment::p2p_slot(int from, int to) {
  const size_t n = static_cast<size_t>(header_->ranks);
  return static_cast<char*>(base_) + p2p_slots_offset(header_->ranks, stage_bytes()) +
         (static_cast<size_t>(from) * n + static_cast<size_t>(to)) * p2p_slot_bytes();
}

void SharedSegment::unlink() {
  if (linked_) shm_unlink(name_.c_str());
  linked_ = false;
}

void SharedSegment::fail(int rank, const std::string& why) {
  // Claimed with a sentinel (-2) first, so that the message is complete before failed_rank names its rank
  // and two failing ranks cannot interleave their messages.
  int32_t none = -1;
  if (header_->failed_rank.compare_exchange_strong(none, -2)) {
    std::snprintf(header_->failure, sizeof header_->failure, "%s", why.c_str());
    header_->failed_rank.store(rank, std::memory_order_release);
  }
  wake_all();
}

std::string SharedSegment::failure() const {
  const int32_t r = header_->failed_rank.load(std::memory_order_acquire);
  if (r < 0) return "";
  return "rank " + std::to_string(r) + ": " + header_->failure;
}

void SharedSegment::wake_all() {
  futex_wake(header_->data_barrier.generation);
  futex_wake(header_->host_barrier.generation);
  futex_wake(header_->joined);
  for (int r = 0; r < header_->ranks; ++r) futex_wake(slot(r).doorbell);
}

WaitEnd barrier_wait(Barrier& b, int parties, const std::function<bool()>& stop) {
  const uint32_t gen = b.generation.load(std::memory_order_acquire);
  if (b.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(parties)) {
    b.arrived.store(0, std::memory_order_relaxed);
    b.generation.fetch_add(1, std::memory_order_release);
    futex_wake(b.generation);
    return WaitEnd::passed;
  }
  // A short spin first: on a busy host the last rank usually arrives within microseconds.
  for (int i = 0; i < 64; ++i) {
    if (b.generation.load(std::memory_order_acquire) != gen) return WaitEnd::passed;
    std::this_thread::yield();
  }
  while (b.generation.load(std::memory_order_acquire) == gen) {
    if (stop()) return WaitEnd::stopped;
    futex_wait(b.generation, gen, std::chrono::milliseconds(20));
  }
  return WaitEnd::passed;
}

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::milliseconds timeout) {
  timespec ts{static_cast<time_t>(timeout.count() / 1000),
              static_cast<long>(timeout.count() % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace autotune::standin
