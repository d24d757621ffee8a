#include "plugins/exploration.hpp"

#include <cmath>

namespace autotune::plugin::explore {
namespace {

// splitmix64's finaliser: every input bit reaches every output bit.
uint64_t mix(uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int bytes_log2(uint64_t bytes) noexcept {
  return bytes == 0 ? 0 : 63 - __builtin_clzll(bytes);
}

}  // namespace

bool chosen(uint64_t comm_id, int collective, int log2, uint64_t index, double fraction) noexcept {
  if (!(fraction > 0.0)) return false;
  const uint64_t h =
      mix(mix(comm_id ^ mix(index)) ^ (static_cast<uint64_t>(collective) << 8 | static_cast<uint64_t>(log2)));
  // The top 53 bits as a uniform double in [0, 1).
  return static_cast<double>(h >> 11) * 0x1.0p-53 < fraction;
}

bool close_evidence(const profiles::Rule& r) noexcept {
  if (!r.runner_up || !r.busbw_gbps || !(*r.busbw_gbps > 0.0)) return false;
  const auto& u = *r.runner_up;
  if (u.algorithm == r.algorithm && u.protocol == r.protocol && u.channels == r.channels) return false;
  return std::fabs(*r.busbw_gbps - u.busbw_gbps) <= kClose * *r.busbw_gbps;
}

Plan::Plan(const std::vector<profiles::Rule>& rules, uint64_t comm_id, double fraction)
    : targets_(rules.size()),
      per_range_(new std::atomic<uint32_t>[rules.size()]),
      comm_id_(comm_id),
      fraction_(fraction) {
  for (size_t i = 0; i < rules.size(); ++i) {
    per_range_[i].store(0, std::memory_order_relaxed);
    if (!close_evidence(rules[i])) continue;
    const auto& u = *rules[i].runner_up;
    targets_[i] = {true, static_cast<int>(u.algorithm), static_cast<int>(u.protocol), u.channels};
    ++ranges_;
  }
}

bool Plan::take(uint32_t source, int collective, uint64_t bytes) noexcept {
  const uint64_t index = calls_.fetch_add(1, std::memory_order_relaxed);
  if (source >= targets_.size() || !targets_[source].enabled) return false;
  // Deterministic caps: the fraction of this communicator's calls so far, and the range's budget.
  const uint64_t done = explored_.load(std::memory_order_relaxed);
  if (static_cast<double>(done + 1) > fraction_ * static_cast<double>(index + 1)) return false;
  if (per_range_[source].load(std::memory_order_relaxed) >= kBudget) return false;
  if (!chosen(comm_id_, collective, bytes_log2(bytes), index, fraction_)) return false;
  explored_.fetch_add(1, std::memory_order_relaxed);
  per_range_[source].fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Plan::refund(uint32_t source) noexcept {
  explored_.fetch_sub(1, std::memory_order_relaxed);
  if (source < targets_.size()) per_range_[source].fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace autotune::plugin::explore
