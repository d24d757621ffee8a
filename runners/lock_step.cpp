#include "runners/lock_step.hpp"

#include <algorithm>
#include <limits>

namespace autotune::runners {
namespace {

// Agreement takes the worst; the order is how bad each is for the measurement. Past the outcomes: broken.
constexpr Outcome kBySeverity[] = {Outcome::ok, Outcome::unsupported, Outcome::wrong_result, Outcome::failed,
                                   Outcome::timed_out};
constexpr int kBroken = 5;

int severity(Outcome o) {
  for (int s = 0; s < 5; ++s)
    if (kBySeverity[s] == o) return s;
  return 3;
}

}  // namespace

bool LockStep::step(const std::function<void()>& body) {
  int mine = severity_;
  if (severity_ == 0) {
    try {
      body();
    } catch (const StepFailure& e) {
      mine = std::max(1, severity(e.outcome));
      detail_ = e.what();
    } catch (const std::exception& e) {
      mine = kBroken;
      detail_ = e.what();
    }
  }
  double agreed = mine;
  processes_.allreduce_max(std::span<double>(&agreed, 1));
  const int all = static_cast<int>(agreed);
  if (all == kBroken) throw RunnerBroken(broken_reason(mine == kBroken));
  if (all > mine) detail_ = std::string(name(kBySeverity[all])) + " on another rank";
  severity_ = std::max(severity_, all);
  return severity_ == 0;
}

std::string LockStep::broken_reason(bool broken_here) const {
  if (!processes_.distributed()) return detail_;
  // Every process reports the same reason: the lowest broken rank's own.
  int who = broken_here ? processes_.rank() : std::numeric_limits<int>::max();
  processes_.allreduce_min(std::span<int>(&who, 1));
  return "rank " + std::to_string(who) + ": " + broadcast_text(processes_, detail_, who);
}

Outcome LockStep::outcome() const {
  return kBySeverity[std::clamp(severity_, 0, 4)];
}

}  // namespace autotune::runners
