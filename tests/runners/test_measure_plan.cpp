#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>

#include "runners/measure_plan.hpp"
#include "runners/watchdog.hpp"
#include "support/manual_clock.hpp"

using namespace autotune::runners;
using namespace std::chrono_literals;

TEST_CASE("Iterations scale with size: long enough to time, never forever", "[plan]") {
  IterationPolicy p;                      // 2 ms per repetition, 1..1000
  CHECK(iterations_for(1.0, p) == 1000);  // 8 B: capped
  CHECK(iterations_for(20.0, p) == 100);
  CHECK(iterations_for(2000.0, p) == 1);
  CHECK(iterations_for(50000.0, p) == 1);  // 8 GB: one operation per repetition
  CHECK(iterations_for(0.0, p) == 1000);   // unknown: the maximum
  CHECK(iterations_for(-3.0, p) == 1000);
  p.min_iterations = 5;
  CHECK(iterations_for(50000.0, p) == 5);
  // Monotone: a bigger estimate never gets more iterations.
  int prev = iterations_for(0.1);
  for (double t = 0.2; t < 1e6; t *= 1.7) {
    int n = iterations_for(t);
    CHECK(n <= prev);
    prev = n;
  }
  CHECK(rough_estimate_us(8) < rough_estimate_us(1 << 30));
  CHECK(per_operation_us(2.0, 100) == Approx(20.0));
  CHECK(per_operation_us(2.0, 0) == 0.0);
}

TEST_CASE("Timings combine across ranks as the max, with the mean beside it", "[plan]") {
  std::vector<std::vector<double>> ranks = {{10, 20, 30}, {12, 18, 30}, {11, 25, 27}};
  CombinedTimes c = combine_ranks(ranks);
  CHECK(c.max_us == std::vector<double>{12, 25, 30});
  REQUIRE(c.mean_us.size() == 3);
  CHECK(c.mean_us[0] == Approx(11.0));
  CHECK(c.mean_us[1] == Approx(21.0));
  CHECK(c.mean_us[2] == Approx(29.0));
  CHECK(combine_ranks({}).max_us.empty());
  std::vector<std::vector<double>> ragged = {{1, 2}, {1}};
  CHECK_THROWS_AS(combine_ranks(ragged), std::invalid_argument);
}

TEST_CASE("The watchdog's bound scales with size and never drops below the floor", "[watchdog]") {
  WatchdogPolicy p;
  CHECK(watchdog_bound(8, 1, p).count() == Approx(10.0).epsilon(1e-6));
  CHECK(watchdog_bound(8ULL << 30, 1, p).count() > watchdog_bound(1 << 20, 1, p).count());
  CHECK(watchdog_bound(1ULL << 30, 10, p).count() > watchdog_bound(1ULL << 30, 1, p).count());
  CHECK(watchdog_bound(1ULL << 30, 1, p).count() == Approx(10.0 + (1ULL << 30) / 0.5e9));
  p.scale = 2.0;
  CHECK(watchdog_bound(8, 1, p).count() == Approx(20.0).epsilon(1e-6));
}

TEST_CASE("A hanging operation is aborted and reported as timed out", "[watchdog]") {
  int aborts = 0;
  std::atomic<bool> aborted{false};
  // The fake operation never finishes until it is aborted (like a collective stuck on a peer).
  auto poll = [&] { return aborted ? WaitResult::failed : WaitResult::timed_out; };
  auto abort = [&] {
    ++aborts;
    aborted = true;
  };
  auto start = std::chrono::steady_clock::now();
  WaitResult r = wait_with_watchdog(poll, abort, 50ms);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r == WaitResult::timed_out);
  CHECK(aborts == 1);
  CHECK(took >= 50ms);
  CHECK(took < 2s);
}

TEST_CASE("The watchdog waits out a whole bound on the clock it is given", "[watchdog]") {
  // An hour-long bound, in no real time: every poll sleeps 1 s of the manual clock.
  autotune::test::ManualClock clock;
  int polls = 0, aborts = 0;
  auto never = [&] {
    ++polls;
    return WaitResult::timed_out;
  };
  const auto start = clock.now();
  CHECK(wait_with_watchdog(
            never, [&] { ++aborts; }, 3600s, 1000ms, clock) == WaitResult::timed_out);
  CHECK(aborts == 1);
  CHECK(clock.seconds_since(start) == Approx(3600.0));
  CHECK(polls == 3601);  // at 0 s, 1 s, ..., 3600 s: the last poll sees the deadline
}

TEST_CASE("A finishing operation is not aborted, a failing one is reported as failed", "[watchdog]") {
  int polls = 0, aborts = 0;
  auto finishes = [&] { return ++polls >= 3 ? WaitResult::done : WaitResult::timed_out; };
  CHECK(wait_with_watchdog(
            finishes, [&] { ++aborts; }, 5s) == WaitResult::done);
  CHECK(polls == 3);
  CHECK(aborts == 0);
  auto fails = [] { return WaitResult::failed; };
  CHECK(wait_with_watchdog(
            fails, [&] { ++aborts; }, 5s) == WaitResult::failed);
  CHECK(aborts == 0);
}
