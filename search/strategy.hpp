#pragma once
// A search strategy decides what to measure, batch by batch, inside one job (process-wide setting) at one
// scale. It measures through a MeasureFn that journals, replays on --resume and enforces the time budget, so
// a strategy only chooses. Both measure sizes of the grid only. Exhaustive measures every candidate at every
// size: the reference. Adaptive measures coarsely, drops candidates that are clearly beaten and bisects to
// where the winner changes. Both
// end with rounds of fresh repetitions wherever the derivation's answer is still in doubt
// (repetition_rounds.hpp). Strategies are deterministic functions of the measurements they get back, which
// is what lets --resume replay them. Stateless objects; run() may be called concurrently.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runners/runner.hpp"
#include "search/derive.hpp"
#include "search/search_space.hpp"

namespace autotune::search {

struct StrategyInput {
  std::vector<CollectiveSpace> collectives;
  std::vector<uint64_t> sizes;  // the grid, ascending
  int repetitions = 5;
  DeriveOptions derive;  // the derivation's threshold and confidence: decide where the winner "changes"
  // Rounds of fresh repetitions where an answer is in doubt: twice the first measurement's, doubling each
  // round (10, 20, 40, 80, 160 after 5), up to 315 per candidate and size.
  int repetition_rounds = 5;
};

// Measures a batch. Returns nullopt when the budget does not allow the batch (nothing was measured).
using MeasureFn = std::function<std::optional<std::vector<runners::Measurement>>(
    const std::vector<runners::MeasureRequest>&)>;

struct StrategyReport {
  uint64_t measurements = 0;
  std::vector<std::string> skipped;   // what the budget cut, in words
  std::vector<std::string> given_up;  // doubts the repetition rounds left unsettled, in words
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
  // How many measurements the strategy expects to make (exact for exhaustive, an estimate for adaptive), for
  // --dry-run, the progress line and budget planning.
  virtual uint64_t planned_measurements(const StrategyInput& input) const = 0;
  virtual StrategyReport run(const StrategyInput& input, const MeasureFn& measure) const = 0;
};

struct AdaptiveOptions {
  int coarse_stride = 5;         // measure every candidate at every this-many-th grid size first
  double drop_ratio = 2.0;       // slower than the best by this factor at a bandwidth-bound coarse size, and
                                 // losing ground since the coarse size before: dropped
  double contender_ratio = 1.3;  // within this factor of the best at either end of an interval: bisected with
};

// "exhaustive" or "adaptive"; throws InputError("<arguments>", 0, ...) for another name.
std::unique_ptr<Strategy> make_strategy(std::string_view name, const AdaptiveOptions& adaptive = {});
std::unique_ptr<Strategy> make_exhaustive_strategy();
std::unique_ptr<Strategy> make_adaptive_strategy(const AdaptiveOptions& options = {});

}  // namespace autotune::search
