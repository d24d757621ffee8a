#include "common/clock.hpp"

#include <thread>

namespace autotune {
namespace {

class SteadyClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  void sleep_for(duration d) const override { std::this_thread::sleep_for(d); }
};

}  // namespace

const Clock& steady_clock() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace autotune
