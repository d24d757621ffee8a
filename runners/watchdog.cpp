#include "runners/watchdog.hpp"

#include <algorithm>

namespace autotune::runners {

std::chrono::duration<double> watchdog_bound(uint64_t bytes, int operations, const WatchdogPolicy& policy) {
  double per_op_s = static_cast<double>(bytes) / (policy.assumed_min_gbps * 1e9);
  double seconds = policy.floor_s + std::max(1, operations) * per_op_s;
  return std::chrono::duration<double>(seconds * std::max(0.0, policy.scale));
}

WaitResult wait_with_watchdog(const std::function<WaitResult()>& poll, const std::function<void()>& abort,
                              std::chrono::duration<double> bound, std::chrono::milliseconds poll_interval,
                              const Clock& clock) {
  const auto deadline = clock.now() + std::chrono::duration_cast<Clock::duration>(bound);
  for (;;) {
    WaitResult r = poll();
    if (r == WaitResult::done || r == WaitResult::failed) return r;
    if (clock.now() >= deadline) {
      abort();
      return WaitResult::timed_out;
    }
    clock.sleep_for(poll_interval);
  }
}

}  // namespace autotune::runners
