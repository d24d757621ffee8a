#pragma once
// Large scales from a model, confirmed where it matters. A scale is predicted when it is larger than
// `above_nodes` and at least two smaller multi-node scales of the same ranks per node are measured before it:
// NCCL's cost model is fitted per (collective, candidate) to their measurements (search/cost_fit.hpp), every
// candidate's time at every size of the grid is predicted, and the rules that prediction gives
// (search/derive.hpp, the one deriver) are confirmed by measuring at full scale only the sizes around each
// predicted crossover (below, at, above) and a few checks (smallest, middle, largest), with NCCL's default,
// the predicted winner and its runner-up. A confirmation misses when the predicted choice is beaten there by
// another measured candidate beyond the noise (the derivation's own gain-interval test against min_gain,
// search/gain_interval.hpp), or when a time misses its prediction beyond the noise by more than
// `time_tolerance` (the gain interval of predicted over measured time lies outside +-time_tolerance: a
// slow link only the full scale crosses). A miss makes the scale fall back to measuring in full. Predicted
// times are journaled as records of source "predicted", never as measurements, and the profile's rules say
// which were confirmed (search/rule_basis.hpp).

#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "search/journal.hpp"
#include "search/strategy.hpp"

namespace autotune::calibrate {

struct PredictOptions {
  bool enabled = true;  // --predict auto; off measures every scale in full
  int above_nodes = 64;
  int min_measured_scales = 2;  // smaller multi-node scales of the same ranks per node, measured in full
  // How far a confirmed time may stray from its prediction: the fitted model extrapolates latencies that
  // real (and simulated) fabrics do not grow exactly linearly; decisions are held to min_gain regardless.
  double time_tolerance = 0.2;
};

// "off" or "auto"; throws InputError("--predict", 0, ...) for anything else.
PredictOptions parse_predict_mode(const std::string& text);

// The scales of a calibration (in the order they are measured) that are predicted.
std::set<runners::Scale> predicted_scales(const std::vector<runners::Scale>& scales, const PredictOptions& o);

// What confirming one predicted scale plans to measure (the dry run's figure): the checks and three sizes
// around an assumed two crossovers per collective, with three candidates each.
uint64_t planned_confirmations(const search::StrategyInput& input);

struct PredictionInput {
  std::span<const search::JournalRecord> records;  // everything measured so far
  runners::ProcessSetting setting;
  runners::Scale scale;
  const search::StrategyInput* input = nullptr;  // the grid, collectives, candidates, repetitions, threshold
  double time_tolerance = 0.2;                   // PredictOptions::time_tolerance
};

struct ScalePrediction {
  bool confirmed = false;
  std::vector<search::JournalRecord> predicted;  // source "predicted"; journal them when confirmed
  uint64_t confirmations = 0;                    // measurements made to confirm
  std::string detail;                            // what happened, in words
};

// Predicts the scale and measures the confirmations through `measure` (the strategies' seam). Not confirmed
// when the model cannot predict (too few points), the budget stops a confirmation, or one misses.
ScalePrediction predict_and_confirm(const PredictionInput& in, const search::MeasureFn& measure);

}  // namespace autotune::calibrate
