#include "tuner/derive.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/input_error.hpp"

namespace autotune::tuner {

using nccl::Collective;
using runners::Candidate;
using runners::Outcome;
using runners::ProcessSetting;
using runners::Scale;
namespace {

// The edge between two measured sizes: their geometric mean, so that on a x2 grid each side gets the half (in
// log scale) nearest to it. Returns a value in [a, b).
uint64_t edge_between(uint64_t a, uint64_t b) {
  long double g = std::sqrt(static_cast<long double>(a) * static_cast<long double>(b));
  uint64_t e = static_cast<uint64_t>(g);
  return std::clamp<uint64_t>(e, a, b - 1);
}

double busbw(Collective c, int ranks, uint64_t bytes, double time_us) {
  if (time_us <= 0) return 0.0;
  double algbw = static_cast<double>(bytes) / (time_us * 1e3);
  return algbw * nccl::bus_bandwidth_factor(c, ranks);
}

}  // namespace

double busbw_gbps(Collective c, int ranks, uint64_t bytes, double time_us) {
  return busbw(c, ranks, bytes, time_us);
}

namespace {

struct SettingData {
  ProcessSetting setting;
  std::map<Scale, MeasurementTable> tables;
};

}  // namespace

bool clearly_faster(const Samples& winner, const Samples& baseline) {
  if (!winner.ok() || !baseline.ok()) return false;
  return winner.quantile(0.75) < baseline.quantile(0.25);
}

SizeDecision decide(const MeasurementTable& table, Collective c, uint64_t bytes, double min_gain) {
  SizeDecision d;
  d.bytes = bytes;
  const auto* row = table.at(c, bytes);
  if (!row) return d;
  const Candidate none{};
  auto def_it = row->find(key_of(none));
  const Samples* def = def_it == row->end() ? nullptr : &def_it->second;
  d.default_ok = def && def->ok();
  std::optional<Candidate> winner;
  double winner_us = 0.0;
  for (const auto& [key, samples] : *row) {
    Candidate cand = candidate_of(key);
    if (!samples.ok() || table.banned(c, cand)) continue;
    double med = samples.median();
    if (!winner || med < winner_us) winner = cand, winner_us = med;
  }
  if (winner) d.best = *winner, d.best_us = winner_us;
  if (winner) {
    const auto winner_choice = table.effective(c, bytes, *winner);
    for (const auto& [key, samples] : *row) {
      Candidate cand = candidate_of(key);
      if (cand == *winner || !cand.algorithm || !cand.protocol || !samples.ok() || table.banned(c, cand))
        continue;
      if (winner_choice && table.effective(c, bytes, cand) == winner_choice) continue;
      const double med = samples.median();
      if (!d.runner_up || med < d.runner_up_us) d.runner_up = cand, d.runner_up_us = med;
    }
  }
  if (!d.default_ok) return d;
  d.default_us = def->median();
  auto default_choice = table.effective(c, bytes, none);
  d.choice = default_choice;
  if (!winner || winner->is_default() || !winner->algorithm || !winner->protocol) return d;
  auto winner_choice = table.effective(c, bytes, *winner);
  // The same operation as NCCL's own choice: any difference is noise.
  if (default_choice && winner_choice && *default_choice == *winner_choice) return d;
  const Samples* ws = table.find(c, bytes, *winner);
  double gain = d.default_us / winner_us - 1.0;
  if (gain > min_gain && clearly_faster(*ws, *def)) {
    d.rule = winner;
    d.rule_us = winner_us;
    d.choice = winner_choice;
  }
  return d;
}

std::vector<DerivedRule> merge_decisions(Collective c, const Scale& scale,
                                         const std::vector<SizeDecision>& all,
                                         const MeasurementTable& table) {
  std::vector<SizeDecision> sizes;
  for (const auto& d : all)
    if (d.default_ok) sizes.push_back(d);
  std::sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  std::vector<DerivedRule> rules;
  size_t i = 0;
  while (i < sizes.size()) {
    if (!sizes[i].rule) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < sizes.size() && sizes[j + 1].rule && *sizes[j + 1].rule == *sizes[i].rule) ++j;
    const Candidate& cand = *sizes[i].rule;
    DerivedRule dr;
    dr.scale = scale;
    profiles::Rule& r = dr.rule;
    r.collective = c;
    r.min_bytes = i == 0 ? sizes[0].bytes : edge_between(sizes[i - 1].bytes, sizes[i].bytes) + 1;
    r.max_bytes = j + 1 == sizes.size() ? sizes[j].bytes : edge_between(sizes[j].bytes, sizes[j + 1].bytes);
    r.algorithm = *cand.algorithm;
    r.protocol = *cand.protocol;
    r.channels = cand.channels;
    r.nodes = profiles::CountRange{scale.nodes, scale.nodes};
    r.ranks = profiles::CountRange{scale.ranks, scale.ranks};
    // The shape it was measured as: a rule for 4 x 8 is not for an uneven 4-node communicator of 32 ranks.
    if (scale.ranks_per_node() > 0 && scale.ranks % scale.nodes == 0)
      r.ranks_per_node = profiles::CountRange{scale.ranks_per_node(), scale.ranks_per_node()};
    // Evidence from the largest size in the range: bandwidth figures mean most there.
    const SizeDecision& rep = sizes[j];
    r.busbw_gbps = busbw(c, scale.ranks, rep.bytes, rep.rule_us);
    r.default_busbw_gbps = busbw(c, scale.ranks, rep.bytes, rep.default_us);
    if (rep.runner_up && rep.runner_up_us > 0.0)
      r.runner_up = profiles::Rule::RunnerUp{*rep.runner_up->algorithm, *rep.runner_up->protocol,
                                             rep.runner_up->channels,
                                             busbw(c, scale.ranks, rep.bytes, rep.runner_up_us)};
    int samples = 0;
    double gain_sum = 0.0;
    for (size_t k = i; k <= j; ++k) {
      if (const Samples* s = table.find(c, sizes[k].bytes, cand))
        samples += static_cast<int>(s->times_us.size());
      gain_sum += sizes[k].default_us / sizes[k].rule_us - 1.0;
    }
    r.samples = samples;
    dr.measured_sizes = static_cast<int>(j - i + 1);
    dr.mean_gain = gain_sum / dr.measured_sizes;
    rules.push_back(std::move(dr));
    i = j + 1;
  }
  return rules;
}

Derivation derive(std::span<const JournalRecord> records, const DeriveOptions& options) {
  std::vector<SettingData> settings;
  for (const auto& rec : records) {
    if (rec.source == "production") continue;  // kept apart: learn's, not the calibration's
    auto it = std::find_if(settings.begin(), settings.end(),
                           [&](const SettingData& s) { return s.setting.id == rec.setting.id; });
    if (it == settings.end()) {
      settings.push_back({rec.setting, {}});
      it = settings.end() - 1;
    }
    it->tables[rec.scale].add(rec.measurement);
  }
  if (settings.empty())
    throw InputError("<journal>", 0, "expected measurements to derive a profile from, found none");

  // Decisions per setting, scale, collective, size.
  using Point = std::tuple<Scale, Collective, uint64_t>;
  std::vector<std::map<Point, SizeDecision>> decisions(settings.size());
  for (size_t s = 0; s < settings.size(); ++s)
    for (const auto& [scale, table] : settings[s].tables)
      for (Collective c : table.collectives())
        for (uint64_t bytes : table.sizes(c))
          decisions[s][{scale, c, bytes}] = decide(table, c, bytes, options.min_gain);

  // Score every setting over the points all of them measured: the sum of decided times, so large transfers
  // count for their time.
  std::set<Point> common;
  for (const auto& [p, d] : decisions[0])
    if (d.default_ok) common.insert(p);
  for (size_t s = 1; s < settings.size(); ++s)
    for (auto it = common.begin(); it != common.end();) {
      auto d = decisions[s].find(*it);
      it = (d == decisions[s].end() || !d->second.default_ok) ? common.erase(it) : std::next(it);
    }
  Derivation out;
  for (size_t s = 0; s < settings.size(); ++s) {
    SettingScore score{settings[s].setting, 0.0, 0};
    for (const auto& p : common) score.total_us += decisions[s][p].time_us(), ++score.points;
    out.scores.push_back(score);
  }
  size_t baseline = 0;
  for (size_t s = 0; s < settings.size(); ++s)
    if (settings[s].setting.is_default()) {
      baseline = s;
      break;
    }
  size_t best = baseline;
  for (size_t s = 0; s < settings.size(); ++s)
    if (out.scores[s].total_us < out.scores[best].total_us) best = s;
  size_t chosen = baseline;
  if (common.empty() && settings.size() > 1) {
    out.notes.push_back("process-wide settings not compared: no size was measured under all of them");
  } else if (settings.size() > 1) {
    double gain = out.scores[baseline].total_us / out.scores[best].total_us - 1.0;
    if (best != baseline && gain > options.min_gain) {
      chosen = best;
      out.env = settings[best].setting.env;
      out.notes.push_back("process-wide setting '" + settings[best].setting.id +
                          "' kept: " + std::to_string(gain * 100.0).substr(0, 4) + "% less time than '" +
                          settings[baseline].setting.id + "' over " + std::to_string(common.size()) +
                          " points");
    } else if (best != baseline) {
      out.notes.push_back("process-wide setting '" + settings[best].setting.id +
                          "' was best but gained only " + std::to_string(gain * 100.0).substr(0, 4) +
                          "% over '" + settings[baseline].setting.id +
                          "': below the threshold, [env] left empty");
    } else {
      out.notes.push_back("NCCL's default process-wide settings were best: [env] left empty");
    }
  }
  out.setting = settings[chosen].setting;
  std::sort(out.scores.begin(), out.scores.end(),
            [](const SettingScore& a, const SettingScore& b) { return a.total_us < b.total_us; });

  bool any_default = false;
  for (const auto& [scale, table] : settings[chosen].tables)
    for (Collective c : table.collectives()) {
      std::vector<SizeDecision> ds;
      for (uint64_t bytes : table.sizes(c)) {
        ds.push_back(decisions[chosen][{scale, c, bytes}]);
        any_default = any_default || ds.back().default_ok;
      }
      auto rules = merge_decisions(c, scale, ds, table);
      out.rules.insert(out.rules.end(), rules.begin(), rules.end());
    }
  if (!any_default)
    throw InputError("<journal>", 0,
                     "expected measurements of NCCL's default choice under setting '" + out.setting.id +
                         "', found none that succeeded: nothing to compare candidates with");

  // Candidates that failed (not merely unsupported here), over every setting.
  for (const auto& sd : settings)
    for (const auto& [scale, table] : sd.tables)
      for (Collective c : table.collectives())
        for (uint64_t bytes : table.sizes(c))
          for (const auto& [key, samples] : *table.at(c, bytes)) {
            if (!samples.failure || *samples.failure == Outcome::unsupported) continue;
            Candidate cand = candidate_of(key);
            // Named copies: clang before 16 cannot capture structured bindings.
            const auto& shape = scale;
            const Outcome failure = *samples.failure;
            auto f = std::find_if(out.failed.begin(), out.failed.end(), [&](const FailedCandidate& x) {
              return x.setting == sd.setting.id && x.scale == shape && x.collective == c &&
                     x.candidate == cand && x.outcome == failure;
            });
            if (f == out.failed.end()) {
              out.failed.push_back({sd.setting.id, scale, c, cand, *samples.failure, samples.detail, {}});
              f = out.failed.end() - 1;
            }
            f->sizes.push_back(bytes);
          }
  return out;
}

}  // namespace autotune::tuner
