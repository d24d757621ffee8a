#include "runners/measure_plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace autotune::runners {

int iterations_for(double estimate_us, const IterationPolicy& policy) {
  const int lo = std::max(1, policy.min_iterations);
  const int hi = std::max(lo, policy.max_iterations);
  if (!(estimate_us > 0.0)) return hi;
  double n = std::ceil(policy.target_us / estimate_us);
  return static_cast<int>(std::clamp(n, static_cast<double>(lo), static_cast<double>(hi)));
}

double rough_estimate_us(uint64_t bytes) {
  // 10 us of latency and 10 GB/s: pessimistic for NVLink, about right for PCIe or one NIC.
  return 10.0 + static_cast<double>(bytes) / 1e4;
}

CombinedTimes combine_ranks(std::span<const std::vector<double>> per_rank) {
  CombinedTimes out;
  if (per_rank.empty()) return out;
  const size_t reps = per_rank.front().size();
  out.max_us.assign(reps, 0.0);
  out.mean_us.assign(reps, 0.0);
  for (const auto& rank : per_rank) {
    if (rank.size() != reps) throw std::invalid_argument("ranks report different numbers of repetitions");
    for (size_t k = 0; k < reps; ++k) {
      out.max_us[k] = std::max(out.max_us[k], rank[k]);
      out.mean_us[k] += rank[k];
    }
  }
  for (double& m : out.mean_us) m /= static_cast<double>(per_rank.size());
  return out;
}

}  // namespace autotune::runners
