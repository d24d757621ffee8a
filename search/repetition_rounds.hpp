#pragma once
// The last phase of every strategy: wherever more repetitions could change the derivation's answer (a gain
// whose interval holds the threshold, a rule only just past it, two best candidates that cannot be told
// apart: derive.hpp's doubts), measure the candidates involved again, round after round, until nothing is
// in doubt or the rounds run out. Fresh repetitions pool with the old ones, so the noise is estimated
// where it is, from ever more samples. A doubt is given up, and said so, once even the rounds' cap could not
// settle it: its intervals narrowed as a median's spread does (1/sqrt(repetitions)) around their estimates
// to the repetitions the last round would reach still hold their thresholds, and none leans towards a rule
// (a rule never rests on fewer repetitions than the rounds would give it). The derivation then decides on
// what was measured, by the same rules as anywhere else. Deterministic given the measurements, as
// strategies must be.

#include <cstdint>
#include <set>
#include <utility>

#include "search/derive.hpp"
#include "search/strategy.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::search {

// Adds what it measures to `table` and to `report`; stops early (and says so in report.skipped) when the
// budget refuses a round; says each doubt it gave up in report.given_up. Points in `spent` (collective,
// bytes) had their rounds already and are left as they are: a strategy that measures new sizes after the
// rounds gives the rounds to those alone.
using SpentPoints = std::set<std::pair<nccl::Collective, uint64_t>>;
void spend_repetitions(const StrategyInput& input, const MeasureFn& measure, MeasurementTable& table,
                       StrategyReport& report, const SpentPoints& spent = {});

// Whether repetitions up to `cap` per side could settle the question: false when its interval, narrowed
// around its estimate to `cap` repetitions, would still hold its threshold. True for a question with a side
// not measured yet (measuring it is what answers it).
bool could_settle(const DoubtQuestion& question, int cap);

}  // namespace autotune::search
