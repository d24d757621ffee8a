#pragma once
// Exploration identical on every rank ([online] explore = fraction): which getCollInfo call tries the
// runner-up instead of the rule is a pure function of what every rank of the communicator sees alike, the
// communicator's id (NCCL's commHash, given to every rank's init), the collective, the size bucket and the
// call's index on that communicator (every rank asks the tuner for the same collectives in the same order),
// so every rank picks the same calls without any communication. Only ranges whose runner-up is close
// (within kClose of the rule's bus bandwidth, as the calibration measured both) explore, at most `fraction`
// of the communicator's calls counted from its first (a deterministic cap on top of the hash, so the bound
// holds exactly), and at most kBudget calls per range per communicator: then that range is decided for the
// job, and `learn` decides it for the next versions. Nothing local (rank, time, a measurement) enters.
// take() is inline and touches a range's state only on the ~fraction of calls the cap and the hash let
// through. Thread-compatible per communicator: NCCL calls one communicator's tuner from one thread at a time
// (the counters are relaxed atomics, so concurrent calls on one communicator would be no data race, only
// miscounts).

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::plugin::explore {

inline constexpr double kClose = 0.10;
inline constexpr uint32_t kBudget = 256;

// splitmix64's finaliser: every input bit reaches every output bit.
inline uint64_t mix(uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline int bytes_log2(uint64_t bytes) noexcept {
  return bytes == 0 ? 0 : 63 - __builtin_clzll(bytes);
}

// fraction as a threshold on a 64-bit hash (0 never, fractions above 1 always).
uint64_t threshold_of(double fraction) noexcept;

// The hash's verdict for one call: true for about `fraction` of indices, the same for the same inputs.
inline bool chosen(uint64_t comm_id, int collective, int log2, uint64_t index, uint64_t threshold) noexcept {
  const uint64_t call = static_cast<uint64_t>(collective) << 8 | static_cast<uint64_t>(log2);
  // Weyl-sequence steps keep (comm, index, call) apart before one finaliser spreads them.
  return mix(comm_id + index * 0x9e3779b97f4a7c15ull + call * 0xd1b54a32d192ed03ull) < threshold;
}

// Whether a rule's range may explore: its runner-up is recorded and close to it.
bool close_evidence(const profiles::Rule& rule) noexcept;

struct Target {
  bool enabled = false;
  int8_t algorithm = -1, protocol = -1;
  uint8_t channels = 0;
  std::atomic<uint32_t> explored{0};  // calls of this range explored on this communicator
};

// One communicator's exploration: per rule (by its index in the profile) what to try, and the counters.
class Plan {
 public:
  Plan(const std::vector<profiles::Rule>& rules, uint64_t comm_id, double fraction);

  // Counts the call; true (and the range's counter advanced) when this call explores rule `source`.
  bool take(uint32_t source, int collective, uint64_t bytes) noexcept {
    const uint64_t index = calls_.load(std::memory_order_relaxed);
    calls_.store(index + 1, std::memory_order_relaxed);
    // Deterministic cap first: the fraction of this communicator's calls so far.
    const uint64_t done = explored_.load(std::memory_order_relaxed);
    if (static_cast<double>(done + 1) > fraction_ * static_cast<double>(index + 1)) return false;
    if (!chosen(comm_id_, collective, bytes_log2(bytes), index, threshold_)) return false;
    if (source >= count_) return false;
    Target& t = targets_[source];
    const uint32_t spent = t.explored.load(std::memory_order_relaxed);
    if (!t.enabled || spent >= kBudget) return false;
    explored_.store(done + 1, std::memory_order_relaxed);
    t.explored.store(spent + 1, std::memory_order_relaxed);
    return true;
  }
  const Target& target(uint32_t source) const noexcept { return targets_[source]; }
  size_t ranges() const noexcept { return ranges_; }

  uint64_t calls() const noexcept { return calls_.load(std::memory_order_relaxed); }
  uint64_t explored() const noexcept { return explored_.load(std::memory_order_relaxed); }
  // The call was counted but the runner-up could not run (NCCL ruled its entry out): give it back.
  void refund(uint32_t source) noexcept;

 private:
  std::unique_ptr<Target[]> targets_;
  size_t count_ = 0;
  uint64_t comm_id_;
  double fraction_;
  uint64_t threshold_;
  size_t ranges_ = 0;
  std::atomic<uint64_t> calls_{0}, explored_{0};
};

}  // namespace autotune::plugin::explore
