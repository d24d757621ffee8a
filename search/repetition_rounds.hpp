#pragma once
// The last phase of every strategy: wherever more repetitions could change the derivation's answer (a gain
// whose interval holds the threshold, a rule only just past it, two best candidates that cannot be told
// apart: derive.hpp's doubts), measure the candidates involved again, round after round, until nothing is
// in doubt or the rounds run out. Fresh repetitions pool with the old ones, so the noise is estimated
// where it is, from ever more samples. Deterministic given the measurements, as strategies must be.

#include <cstdint>
#include <set>
#include <utility>

#include "search/strategy.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::search {

// Adds what it measures to `table` and to `report`; stops early (and says so in report.skipped) when the
// budget refuses a round. Points in `spent` (collective, bytes) had their rounds already and are left as
// they are: a strategy that measures new sizes after the rounds gives the rounds to those alone.
using SpentPoints = std::set<std::pair<nccl::Collective, uint64_t>>;
void spend_repetitions(const StrategyInput& input, const MeasureFn& measure, MeasurementTable& table,
                       StrategyReport& report, const SpentPoints& spent = {});

}  // namespace autotune::search
