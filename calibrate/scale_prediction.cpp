#include "calibrate/scale_prediction.hpp"

#include <algorithm>
#include <map>

#include "common/input_error.hpp"
#include "common/utc_time.hpp"
#include "search/cost_fit.hpp"
#include "search/derive.hpp"
#include "search/gain_interval.hpp"
#include "search/rule_basis.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::calibrate {

using runners::Candidate;
using runners::Scale;
using search::JournalRecord;

PredictOptions parse_predict_mode(const std::string& text) {
  if (text == "auto") return {};
  if (text == "off") return PredictOptions{false};
  throw InputError("--predict", 0, "expected off or auto; found '" + text + "'");
}

std::set<Scale> predicted_scales(const std::vector<Scale>& scales, const PredictOptions& o) {
  std::set<Scale> out;
  if (!o.enabled) return out;
  std::map<int, int> measured;  // per ranks per node: multi-node scales measured in full so far
  for (const auto& s : scales) {
    int& before = measured[s.ranks_per_node()];
    if (s.nodes > o.above_nodes && before >= o.min_measured_scales)
      out.insert(s);
    else if (s.nodes > 1)
      ++before;
  }
  return out;
}

uint64_t planned_confirmations(const search::StrategyInput& input) {
  const uint64_t sizes = std::min<uint64_t>(input.sizes.size(), 3 + 3 * 2);
  return static_cast<uint64_t>(input.collectives.size()) * sizes * 3;
}

namespace {

using FitKey = std::pair<int, search::CandidateKey>;

// The smaller multi-node scales of the same ranks per node, measured: per (collective, candidate), the
// medians the model is fitted to.
std::map<FitKey, std::vector<search::FitPoint>> fit_points(const PredictionInput& in) {
  std::map<FitKey, std::vector<search::FitPoint>> out;
  for (const auto& r : in.records) {
    const auto& m = r.measurement;
    if (r.setting.id != in.setting.id || r.source == search::kPredictedSource || r.source == "production" ||
        m.outcome != runners::Outcome::ok || m.request.point_to_point || r.scale.nodes < 2 ||
        r.scale.nodes >= in.scale.nodes || r.scale.ranks_per_node() != in.scale.ranks_per_node())
      continue;
    out[{static_cast<int>(m.request.collective), search::key_of(m.request.candidate)}].push_back(
        {r.scale.nodes, m.request.bytes, m.median_us()});
  }
  return out;
}

// A predicted time as samples: spread over +-1.5 of the fit's relative residual, so that the gain intervals
// built on them carry the model's uncertainty.
std::vector<double> predicted_samples(const search::PredictedTime& p, int repetitions) {
  std::vector<double> out;
  const int n = std::max(repetitions, 2);
  for (int k = 0; k < n; ++k) out.push_back(p.time_us * (1.0 + p.spread * (-1.5 + 3.0 * k / (n - 1))));
  return out;
}

struct Predicted {
  std::vector<JournalRecord> records;
  std::string missing;  // why the model could not predict, when it could not
};

Predicted predict_records(const PredictionInput& in) {
  const auto points = fit_points(in);
  const std::string now = utc_timestamp_now();
  Predicted out;
  for (const auto& cs : in.input->collectives) {
    std::vector<Candidate> all{Candidate{}};
    all.insert(all.end(), cs.candidates.begin(), cs.candidates.end());
    for (const auto& cand : all) {
      auto it = points.find({static_cast<int>(cs.collective), search::key_of(cand)});
      if (it == points.end() && cand.is_default())
        out.missing =
            std::string(nccl::name(cs.collective)) + ": NCCL's default not measured at smaller scales";
      if (it == points.end()) continue;  // never ran at the smaller scales: not predicted to run here
      for (uint64_t bytes : in.input->sizes) {
        auto t = search::predict_time(it->second, cand.algorithm, in.scale.nodes, bytes);
        if (!t) {
          if (cand.is_default()) out.missing = std::string(nccl::name(cs.collective)) + ": too few points";
          continue;
        }
        runners::Measurement m;
        m.request = {cs.collective, bytes, cand, in.input->repetitions};
        m.times_us = predicted_samples(*t, in.input->repetitions);
        out.records.push_back({in.setting, in.scale, 0, m, search::kPredictedSource,
                               "cost model fitted to " + std::to_string(t->scales) + " smaller scales", now});
      }
    }
  }
  return out;
}

// Indices of the sizes to confirm: around each place the predicted choice changes, and the checks.
std::set<size_t> confirm_indices(const std::vector<search::SizeDecision>& sizes) {
  std::set<size_t> out;
  if (sizes.empty()) return out;
  auto choice = [&](size_t i) { return sizes[i].rule ? search::key_of(*sizes[i].rule) : search::key_of({}); };
  for (size_t i = 1; i < sizes.size(); ++i)
    if (choice(i) != choice(i - 1)) {
      out.insert(i - 1);
      out.insert(i);
      if (i + 1 < sizes.size()) out.insert(i + 1);
    }
  out.insert({0, sizes.size() / 2, sizes.size() - 1});
  return out;
}

using PointKey = std::pair<int, uint64_t>;  // collective, bytes

struct Confirmations {
  std::vector<runners::MeasureRequest> requests;
  std::map<PointKey, Candidate> choice;  // what the predicted rules run at each confirmed size
};

Confirmations confirmation_requests(const PredictionInput& in, const search::MeasurementTable& table) {
  Confirmations out;
  for (const auto& cs : in.input->collectives) {
    const auto decided = search::decide_collective(table, cs.collective, in.scale, in.input->derive);
    for (size_t i : confirm_indices(decided.sizes)) {
      const auto& d = decided.sizes[i];
      std::vector<Candidate> cands{Candidate{}};
      for (const auto& c : {d.winner, d.runner_up})
        if (c && std::find(cands.begin(), cands.end(), *c) == cands.end()) cands.push_back(*c);
      for (const auto& c : cands) out.requests.push_back({cs.collective, d.bytes, c, in.input->repetitions});
      out.choice[{static_cast<int>(cs.collective), d.bytes}] = d.rule.value_or(Candidate{});
    }
  }
  return out;
}

// Whether a measurement misses its prediction beyond the noise: the interval of predicted over measured
// time lies wholly outside +-tolerance. A candidate predicted to run that fails here misses too.
std::string miss(const runners::Measurement& got, const search::Samples* predicted, double tolerance,
                 double confidence) {
  const auto what = std::string(nccl::name(got.request.collective)) + " " +
                    std::to_string(got.request.bytes) + " B " + runners::to_string(got.request.candidate);
  if (!predicted) return "";
  if (got.outcome != runners::Outcome::ok)
    return what + ": predicted to run, " + std::string(name(got.outcome));
  const search::SamplePair pair{predicted->times_us, got.times_us};
  const auto g = search::gain_interval(std::span<const search::SamplePair>(&pair, 1), confidence);
  if (g.low > tolerance || g.high < -tolerance)
    return what + ": measured " + std::to_string(got.median_us()) + " us, predicted " +
           std::to_string(search::median_of(predicted->times_us)) + " us";
  return "";
}

// Whether the predicted choice at a confirmed size is beaten, as measured, by another measured candidate
// beyond the noise (the derivation's own test: the lower end of the gain interval beats min_gain).
std::string wrong_choice(const search::MeasurementTable& got, const PointKey& point, const Candidate& choice,
                         const search::DeriveOptions& o) {
  const auto c = static_cast<nccl::Collective>(point.first);
  const search::Samples* chosen = got.find(c, point.second, choice);
  const auto* all = got.at(c, point.second);
  if (!chosen || !chosen->ok() || !all) return "";
  for (const auto& [key, samples] : *all) {
    if (!samples.ok() || samples.median() >= chosen->median()) continue;
    const search::SamplePair pair{chosen->times_us, samples.times_us};
    if (search::gain_interval(std::span<const search::SamplePair>(&pair, 1), o.confidence).beats(o.min_gain))
      return std::string(nccl::name(c)) + " " + std::to_string(point.second) +
             " B: " + runners::to_string(search::candidate_of(key)) + " beats the predicted " +
             runners::to_string(choice);
  }
  return "";
}

}  // namespace

ScalePrediction predict_and_confirm(const PredictionInput& in, const search::MeasureFn& measure) {
  ScalePrediction out;
  Predicted p = predict_records(in);
  if (!p.missing.empty()) {
    out.detail = "not predicted (" + p.missing + "): measured in full";
    return out;
  }
  search::MeasurementTable table;
  for (const auto& r : p.records) table.add(r.measurement);
  const Confirmations conf = confirmation_requests(in, table);
  const auto got = measure(conf.requests);
  if (!got) {
    out.detail = "the budget stopped the confirmations";
    return out;
  }
  out.confirmations = got->size();
  std::set<std::tuple<int, uint64_t, search::CandidateKey>> measured;
  search::MeasurementTable got_table;
  for (const auto& m : *got) got_table.add(m);
  for (const auto& [point, choice] : conf.choice) {
    std::string why = wrong_choice(got_table, point, choice, in.input->derive);
    if (!why.empty()) {
      out.detail = "a confirmation missed (" + why + "): measured in full";
      return out;
    }
  }
  for (const auto& m : *got) {
    const auto& q = m.request;
    measured.insert({static_cast<int>(q.collective), q.bytes, search::key_of(q.candidate)});
    std::string why = miss(m, table.find(q.collective, q.bytes, q.candidate), in.time_tolerance,
                           in.input->derive.confidence);
    if (!why.empty()) {
      out.detail = "a confirmation missed (" + why + "): measured in full";
      return out;
    }
  }
  for (auto& r : p.records) {
    const auto& q = r.measurement.request;
    if (!measured.count({static_cast<int>(q.collective), q.bytes, search::key_of(q.candidate)}))
      out.predicted.push_back(std::move(r));
  }
  out.confirmed = true;
  out.detail = "predicted, " + std::to_string(out.confirmations) + " confirmation(s) agreed";
  return out;
}

}  // namespace autotune::calibrate
