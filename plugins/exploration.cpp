#include "plugins/exploration.hpp"

#include <cmath>

namespace autotune::plugin::explore {

uint64_t threshold_of(double fraction) noexcept {
  if (!(fraction > 0.0)) return 0;
  if (fraction >= 1.0) return UINT64_MAX;
  return static_cast<uint64_t>(std::ldexp(fraction, 64));
}

bool close_evidence(const profiles::Rule& r) noexcept {
  if (!r.runner_up || !r.busbw_gbps || !(*r.busbw_gbps > 0.0)) return false;
  const auto& u = *r.runner_up;
  if (u.algorithm == r.algorithm && u.protocol == r.protocol && u.channels == r.channels) return false;
  return std::fabs(*r.busbw_gbps - u.busbw_gbps) <= kClose * *r.busbw_gbps;
}

Plan::Plan(const std::vector<profiles::Rule>& rules, uint64_t comm_id, double fraction)
    : targets_(new Target[rules.size()]),
      count_(rules.size()),
      comm_id_(comm_id),
      fraction_(fraction),
      threshold_(threshold_of(fraction)) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!close_evidence(rules[i])) continue;
    const auto& u = *rules[i].runner_up;
    Target& t = targets_[i];
    t.enabled = true;
    t.algorithm = static_cast<int8_t>(u.algorithm);
    t.protocol = static_cast<int8_t>(u.protocol);
    t.channels = static_cast<uint8_t>(u.channels);
    ++ranges_;
  }
}

void Plan::refund(uint32_t source) noexcept {
  explored_.store(explored_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  if (source < count_) {
    auto& e = targets_[source].explored;
    e.store(e.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }
}

}  // namespace autotune::plugin::explore
