#pragma once
// The watchdog: a collective that does not finish within a bound is declared hung, the caller aborts the
// communicator (ncclCommAbort) and reports "timed out" for that candidate, then continues on a fresh one.
// The policy (how long is too long, scaled by size) and the waiting loop are here, free of CUDA: the NCCL
// runner passes a completion poll (cudaStreamQuery / ncclCommGetAsyncError) and an abort action, and tests
// pass a fake operation that hangs. Not thread-safe; one wait at a time per object.

#include <chrono>
#include <cstdint>
#include <functional>

#include "common/clock.hpp"

namespace autotune::runners {

struct WatchdogPolicy {
  double floor_s = 10.0;              // no operation is declared hung sooner (first-use setup, connection)
  double assumed_min_gbps = 0.5;      // a working fabric moves at least this much: bytes / this = allowance
  double scale = 1.0;                 // multiplies the whole bound (slow fabrics, debug builds)
  std::chrono::milliseconds poll{1};  // how often completion is polled
};

// The bound for `operations` operations of `bytes` each.
std::chrono::duration<double> watchdog_bound(uint64_t bytes, int operations,
                                             const WatchdogPolicy& policy = {});

enum class WaitResult { done, failed, timed_out };

// Polls `poll` until it returns done or failed, or the bound has passed; on timeout calls `abort` once and
// returns timed_out. poll returns done / failed / (anything else =) still running: WaitResult::timed_out is
// used by poll to mean "not finished yet".
WaitResult wait_with_watchdog(const std::function<WaitResult()>& poll, const std::function<void()>& abort,
                              std::chrono::duration<double> bound,
                              std::chrono::milliseconds poll_interval = std::chrono::milliseconds(1),
                              const Clock& clock = steady_clock());

}  // namespace autotune::runners
