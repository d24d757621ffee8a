#pragma once
// Time as the code that waits and keeps to budgets sees it: the watchdog, the calibration's time budget, the
// orchestrator's job limits. Behind an interface so that tests run a budget of an hour or a hung operation
// in no time (ManualClock in tests/support). Implementations are thread-safe.

#include <chrono>

namespace autotune {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;
  virtual ~Clock() = default;
  virtual time_point now() const = 0;
  virtual void sleep_for(duration d) const = 0;

  // Seconds since `start`.
  double seconds_since(time_point start) const {
    return std::chrono::duration<double>(now() - start).count();
  }
};

// The machine's monotonic clock.
const Clock& steady_clock();

}  // namespace autotune
