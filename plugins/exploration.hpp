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
// Thread-safe: the counters are atomics (NCCL calls one communicator's tuner from one thread at a time).

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::plugin::explore {

inline constexpr double kClose = 0.10;
inline constexpr uint32_t kBudget = 256;

// The hash's verdict for one call: true for about `fraction` of indices, the same for the same inputs.
bool chosen(uint64_t comm_id, int collective, int bytes_log2, uint64_t index, double fraction) noexcept;

// Whether a rule's range may explore: its runner-up is recorded and close to it.
bool close_evidence(const profiles::Rule& rule) noexcept;

struct Target {
  bool enabled = false;
  int algorithm = -1, protocol = -1, channels = 0;
};

// One communicator's exploration: per rule (by its index in the profile) what to try, and the counters.
class Plan {
 public:
  Plan(const std::vector<profiles::Rule>& rules, uint64_t comm_id, double fraction);

  // Counts the call; true (and the range's counters advanced) when this call explores rule `source`.
  bool take(uint32_t source, int collective, uint64_t bytes) noexcept;
  const Target& target(uint32_t source) const noexcept { return targets_[source]; }
  size_t ranges() const noexcept { return ranges_; }

  uint64_t calls() const noexcept { return calls_.load(std::memory_order_relaxed); }
  uint64_t explored() const noexcept { return explored_.load(std::memory_order_relaxed); }
  // The call was counted but the runner-up could not run (NCCL ruled its entry out): give it back.
  void refund(uint32_t source) noexcept;

 private:
  std::vector<Target> targets_;
  std::unique_ptr<std::atomic<uint32_t>[]> per_range_;
  uint64_t comm_id_;
  double fraction_;
  size_t ranges_ = 0;
  std::atomic<uint64_t> calls_{0}, explored_{0};
};

}  // namespace autotune::plugin::explore
