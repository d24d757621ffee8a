#pragma once
// A clock that moves only when told to, or when the code under test sleeps (a sleep advances it by exactly
// the time asked): budgets, limits and watchdogs run in no real time and deterministically.
// Thread-safe.

#include <atomic>

#include "common/clock.hpp"

namespace autotune::test {

class ManualClock final : public Clock {
 public:
  time_point now() const override { return time_point(duration(ticks_.load())); }
  void sleep_for(duration d) const override { advance(d); }
  void advance(duration d) const { ticks_ += d.count(); }
  template <typename Rep, typename Period>
  void advance(std::chrono::duration<Rep, Period> d) const {
    advance(std::chrono::duration_cast<duration>(d));
  }

 private:
  mutable std::atomic<duration::rep> ticks_{0};
};

}  // namespace autotune::test
