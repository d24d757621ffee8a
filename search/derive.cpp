#include "search/derive.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "search/rule_basis.hpp"

namespace autotune::search {

using nccl::Collective;
using runners::Candidate;
using runners::Outcome;
using runners::Scale;
namespace {

double busbw(Collective c, int ranks, uint64_t bytes, double time_us) {
  if (time_us <= 0) return 0.0;
  double algbw = static_cast<double>(bytes) / (time_us * 1e3);
  return algbw * nccl::bus_bandwidth_factor(c, ranks);
}

const Candidate kDefault{};

}  // namespace

double busbw_gbps(Collective c, int ranks, uint64_t bytes, double time_us) {
  return busbw(c, ranks, bytes, time_us);
}

namespace {

SamplePair pair_at(const MeasurementTable& table, Collective c, uint64_t bytes, const Candidate& cand) {
  const Samples* def = table.find(c, bytes, kDefault);
  const Samples* s = table.find(c, bytes, cand);
  if (!def || !s || !def->ok() || !s->ok()) return {};
  return {def->times_us, s->times_us};
}

// The gain interval of `cand` over the sizes [i, j] of a collective's decisions.
GainInterval run_interval(const MeasurementTable& table, Collective c, const std::vector<SizeDecision>& sizes,
                          size_t i, size_t j, const Candidate& cand, const DeriveOptions& o) {
  std::vector<SamplePair> pairs;
  for (size_t k = i; k <= j; ++k) pairs.push_back(pair_at(table, c, sizes[k].bytes, cand));
  return gain_interval(pairs, i == j ? o.single_confidence : o.confidence);
}

// How far a decision is past the threshold at a size, in log time: 0 for NCCL's default, log(gain ratio) -
// log(1 + min_gain) for a rule's candidate; nullopt when that candidate was not measured there.
std::optional<double> margin(const MeasurementTable& table, Collective c, uint64_t bytes,
                             const std::optional<Candidate>& decision, double min_gain) {
  if (!decision) return 0.0;
  const Samples* def = table.find(c, bytes, kDefault);
  const Samples* s = table.find(c, bytes, *decision);
  if (!def || !s || !def->ok() || !s->ok() || s->median() <= 0) return std::nullopt;
  return std::log(def->median() / s->median()) - std::log1p(min_gain);
}

// The last byte count of the left side of an edge between measured sizes a < b whose decisions differ:
// where the left decision's margin over the right one's, interpolated linearly in log size, crosses zero;
// the geometric mean of a and b where the margins do not say (not measured, or not crossing). In [a, b).
uint64_t edge_between(const MeasurementTable& table, Collective c, uint64_t a, uint64_t b,
                      const std::optional<Candidate>& left, const std::optional<Candidate>& right,
                      double min_gain) {
  const long double la = std::log(static_cast<long double>(a)), lb = std::log(static_cast<long double>(b));
  long double at = (la + lb) / 2;
  auto la_left = margin(table, c, a, left, min_gain), la_right = margin(table, c, a, right, min_gain);
  auto lb_left = margin(table, c, b, left, min_gain), lb_right = margin(table, c, b, right, min_gain);
  if (la_left && la_right && lb_left && lb_right) {
    const double ha = *la_left - *la_right, hb = *lb_left - *lb_right;
    if (ha > 0 && hb < 0) at = la + (lb - la) * (ha / (ha - hb));
  }
  const uint64_t e = static_cast<uint64_t>(std::exp(at));
  return std::clamp<uint64_t>(e, a, b - 1);
}

// A run [i, j] of sizes with the same provisional winner, narrowed from its weaker end until its interval
// beats the threshold. Returns the surviving [i, j] and its interval, or nullopt.
struct Run {
  size_t i, j;
  GainInterval gain;
};
std::optional<Run> test_run(const MeasurementTable& table, Collective c, const std::vector<SizeDecision>& s,
                            size_t i, size_t j, const DeriveOptions& o) {
  const Candidate cand = *s[i].winner;
  while (true) {
    GainInterval g = run_interval(table, c, s, i, j, cand, o);
    if (g.beats(o.min_gain)) return Run{i, j, g};
    if (i == j) return std::nullopt;
    if (s[i].gain.gain < s[j].gain.gain)
      ++i;
    else
      --j;
  }
}

DerivedRule make_rule(const MeasurementTable& table, Collective c, const Scale& scale,
                      const std::vector<SizeDecision>& s, const Run& run, uint64_t min_bytes,
                      uint64_t max_bytes) {
  const Candidate& cand = *s[run.i].winner;
  DerivedRule dr;
  dr.scale = scale;
  dr.gain = run.gain;
  dr.measured_sizes = static_cast<int>(run.j - run.i + 1);
  profiles::Rule& r = dr.rule;
  r.collective = c;
  r.min_bytes = min_bytes;
  r.max_bytes = max_bytes;
  r.algorithm = *cand.algorithm;
  r.protocol = *cand.protocol;
  r.channels = cand.channels;
  r.nodes = profiles::CountRange{scale.nodes, scale.nodes};
  r.ranks = profiles::CountRange{scale.ranks, scale.ranks};
  // The shape it was measured as: a rule for 4 x 8 is not for an uneven 4-node communicator of 32 ranks.
  if (scale.ranks_per_node() > 0 && scale.ranks % scale.nodes == 0)
    r.ranks_per_node = profiles::CountRange{scale.ranks_per_node(), scale.ranks_per_node()};
  // Bandwidth figures mean most at the largest size of the range.
  const SizeDecision& rep = s[run.j];
  r.busbw_gbps = busbw(c, scale.ranks, rep.bytes, rep.winner_us);
  r.default_busbw_gbps = busbw(c, scale.ranks, rep.bytes, rep.default_us);
  if (rep.runner_up && rep.runner_up_us > 0.0)
    r.runner_up =
        profiles::Rule::RunnerUp{*rep.runner_up->algorithm, *rep.runner_up->protocol, rep.runner_up->channels,
                                 busbw(c, scale.ranks, rep.bytes, rep.runner_up_us)};
  int samples = 0, default_samples = 0;
  for (size_t k = run.i; k <= run.j; ++k) {
    if (const Samples* x = table.find(c, s[k].bytes, cand)) samples += static_cast<int>(x->times_us.size());
    if (const Samples* x = table.find(c, s[k].bytes, kDefault))
      default_samples += static_cast<int>(x->times_us.size());
  }
  r.samples = samples;
  r.gain = profiles::GainEvidence{run.gain.gain,       run.gain.low,      run.gain.high,
                                  run.gain.confidence, dr.measured_sizes, default_samples};
  return dr;
}

struct SettingData {
  runners::ProcessSetting setting;
  std::map<Scale, MeasurementTable> tables;
};

using Point = std::tuple<Scale, Collective, uint64_t>;

// The rules and per-point decisions of every setting.
struct SettingDecisions {
  std::map<Point, SizeDecision> points;
  std::vector<DerivedRule> rules;
};
SettingDecisions decide_setting(const SettingData& sd, const DeriveOptions& o) {
  SettingDecisions out;
  for (const auto& [scale, table] : sd.tables)
    for (Collective c : table.collectives()) {
      CollectiveDecisions cd = decide_collective(table, c, scale, o);
      for (auto& d : cd.sizes) out.points[{scale, c, d.bytes}] = d;
      out.rules.insert(out.rules.end(), cd.rules.begin(), cd.rules.end());
    }
  return out;
}

std::string percent(double gain) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", gain * 100.0);
  return buf;
}

}  // namespace

SizeDecision decide(const MeasurementTable& table, Collective c, uint64_t bytes, const DeriveOptions& o) {
  SizeDecision d;
  d.bytes = bytes;
  const auto* row = table.at(c, bytes);
  if (!row) return d;
  const Samples* def = table.find(c, bytes, kDefault);
  d.default_ok = def && def->ok();
  if (!d.default_ok) return d;
  d.default_us = def->median();
  d.choice = table.effective(c, bytes, kDefault);
  for (const auto& [key, samples] : *row) {
    Candidate cand = candidate_of(key);
    if (!samples.ok() || !cand.algorithm || !cand.protocol || table.banned(c, cand)) continue;
    // The same operation as NCCL's own choice: any difference from the default is noise.
    if (table.repeats_default(c, bytes, cand) || (d.choice && table.effective(c, bytes, cand) == d.choice))
      continue;
    const double med = samples.median();
    if (!d.winner || med < d.winner_us) {
      d.runner_up = d.winner, d.runner_up_us = d.winner_us;
      d.winner = cand, d.winner_us = med;
    } else if (!d.runner_up || med < d.runner_up_us) {
      d.runner_up = cand, d.runner_up_us = med;
    }
  }
  if (!d.winner) return d;
  const SamplePair pair = pair_at(table, c, bytes, *d.winner);
  d.gain = gain_interval(std::span<const SamplePair>(&pair, 1), o.single_confidence);
  d.provisional = d.gain.gain > o.min_gain;
  return d;
}

CollectiveDecisions decide_collective(const MeasurementTable& table, Collective c, const Scale& scale,
                                      const DeriveOptions& o) {
  CollectiveDecisions out;
  for (uint64_t bytes : table.sizes(c)) {
    SizeDecision d = decide(table, c, bytes, o);
    if (d.default_ok) out.sizes.push_back(std::move(d));
  }
  auto& s = out.sizes;
  std::vector<Run> runs;
  for (size_t i = 0; i < s.size();) {
    if (!s[i].provisional) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < s.size() && s[j + 1].provisional && *s[j + 1].winner == *s[i].winner) ++j;
    if (auto run = test_run(table, c, s, i, j, o)) {
      runs.push_back(*run);
      for (size_t k = run->i; k <= run->j; ++k) {
        s[k].rule = s[k].winner;
        s[k].choice = table.effective(c, s[k].bytes, *s[k].winner);
      }
    }
    i = j + 1;
  }
  for (const Run& run : runs) {
    const uint64_t lo = run.i == 0 ? s[0].bytes
                                   : edge_between(table, c, s[run.i - 1].bytes, s[run.i].bytes,
                                                  s[run.i - 1].rule, s[run.i].rule, o.min_gain) +
                                         1;
    const uint64_t hi = run.j + 1 == s.size() ? s[run.j].bytes
                                              : edge_between(table, c, s[run.j].bytes, s[run.j + 1].bytes,
                                                             s[run.j].rule, s[run.j + 1].rule, o.min_gain);
    out.rules.push_back(make_rule(table, c, scale, s, run, lo, hi));
  }
  return out;
}

namespace {

int fewer_samples(const SamplePair& pair) {
  return static_cast<int>(std::min(pair.baseline.size(), pair.candidate.size()));
}

bool has_width(const GainInterval& g) {
  return g.measured() && g.high > g.low;
}

}  // namespace

std::vector<Doubt> doubts(const MeasurementTable& table, const std::vector<Collective>& collectives,
                          const DeriveOptions& o) {
  std::vector<Doubt> out;
  auto add = [&](Collective c, uint64_t bytes, std::vector<Candidate> cands, std::string why,
                 DoubtQuestion question) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Doubt& d) { return d.collective == c && d.bytes == bytes; });
    if (it == out.end()) {
      out.push_back({c, bytes, {kDefault}, std::move(why), {}});
      it = out.end() - 1;
    }
    for (const auto& cand : cands)
      if (std::find(it->candidates.begin(), it->candidates.end(), cand) == it->candidates.end())
        it->candidates.push_back(cand);
    it->questions.push_back(question);
  };
  auto single = [&](const SamplePair& pair, double confidence) {
    return gain_interval(std::span<const SamplePair>(&pair, 1), confidence);
  };
  for (Collective c : collectives) {
    const CollectiveDecisions cd = decide_collective(table, c, Scale{}, o);
    const auto& s = cd.sizes;
    auto where = [&](size_t k) { return std::string(nccl::name(c)) + " at " + human_byte_size(s[k].bytes); };
    // Inside a rule firmly past the threshold, with the same rule on both sides: settled. A rule's end
    // sizes decide its edges and stay in question while their own intervals do.
    auto firm = [&](size_t k) {
      if (!s[k].rule || k == 0 || k + 1 == s.size() || s[k - 1].rule != s[k].rule ||
          s[k + 1].rule != s[k].rule)
        return false;
      for (const auto& r : cd.rules)
        if (r.rule.min_bytes <= s[k].bytes && s[k].bytes <= r.rule.max_bytes)
          return r.gain.low > 1.5 * o.min_gain;
      return false;
    };
    for (size_t k = 0; k < s.size(); ++k) {
      const SizeDecision& d = s[k];
      if (!d.winner) continue;
      if (!firm(k) && d.gain.gain > o.min_gain / 2 && d.gain.straddles(o.min_gain))
        add(c, d.bytes, {*d.winner}, where(k) + ": the gain's interval holds the threshold",
            {d.gain, o.min_gain, fewer_samples(pair_at(table, c, d.bytes, *d.winner))});
      if (d.provisional && d.runner_up && d.default_us / d.runner_up_us - 1.0 > o.min_gain) {
        const SamplePair two{table.find(c, d.bytes, *d.runner_up)->times_us,
                             table.find(c, d.bytes, *d.winner)->times_us};
        const GainInterval apart = single(two, o.confidence);
        if (apart.straddles(0.0))
          add(c, d.bytes, {*d.winner, *d.runner_up}, where(k) + ": the two best cannot be told apart",
              {apart, 0.0, fewer_samples(two), false});
      }
      if (!d.provisional) continue;
      // The run could reach a neighbour where its choice has not been ruled out yet.
      for (size_t n : {k - 1, k + 1}) {
        if (n >= s.size() || (s[n].provisional && s[n].winner == d.winner)) continue;
        const SamplePair there = pair_at(table, c, s[n].bytes, *d.winner);
        const GainInterval g = there.candidate.empty() ? GainInterval{} : single(there, o.single_confidence);
        if (there.candidate.empty() || (has_width(g) && g.high > o.min_gain))
          add(c, s[n].bytes, {*d.winner},
              where(n) + ": the neighbouring run of " + runners::to_string(*d.winner) + " could reach it",
              {g, o.min_gain, there.candidate.empty() ? 0 : fewer_samples(there)});
      }
    }
    for (const auto& r : cd.rules)
      if (r.gain.low <= 1.5 * o.min_gain && has_width(r.gain))
        for (const auto& d : s)
          if (d.rule && r.rule.min_bytes <= d.bytes && d.bytes <= r.rule.max_bytes)
            add(c, d.bytes, {*d.rule},
                std::string(nccl::name(c)) + " at " + human_byte_size(d.bytes) +
                    ": its rule's interval is close to the threshold",
                {r.gain, 1.5 * o.min_gain, fewer_samples(pair_at(table, c, d.bytes, *d.rule)), false});
  }
  return out;
}

namespace {

// Point-to-point settings are judged apart (choose_p2p_setting), unless nothing else was measured (one
// worker's own part of an orchestrated calibration): then they are all there is.
std::vector<SettingData> by_setting(std::span<const JournalRecord> records) {
  const bool only_p2p = std::all_of(records.begin(), records.end(), [](const JournalRecord& r) {
    return r.source == "production" || runners::only_point_to_point(r.setting);
  });
  std::vector<SettingData> settings;
  for (const auto& rec : records) {
    if (rec.source == "production") continue;  // kept apart: learn's, not the calibration's
    if (!only_p2p && runners::only_point_to_point(rec.setting)) continue;
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
  return settings;
}

// Scores every setting over the points all of them measured (the sum of decided times, so large transfers
// count for their time) and picks the one whose rules and [env] the profile gets: NCCL's defaults unless
// another beats them by the threshold. Without measurements under NCCL's defaults, the best one, said so.
size_t choose_setting(const std::vector<SettingData>& settings, const std::vector<SettingDecisions>& decided,
                      const DeriveOptions& o, Derivation& out) {
  std::set<Point> common;
  for (const auto& [p, d] : decided.front().points) common.insert(p);
  for (const auto& sd : decided)
    for (auto it = common.begin(); it != common.end();)
      it = sd.points.count(*it) ? std::next(it) : common.erase(it);
  for (size_t s = 0; s < settings.size(); ++s) {
    SettingScore score{settings[s].setting, 0.0, 0};
    for (const auto& p : common) score.total_us += decided[s].points.at(p).time_us(), ++score.points;
    out.scores.push_back(score);
  }
  size_t best = 0;
  for (size_t s = 0; s < settings.size(); ++s)
    if (out.scores[s].total_us < out.scores[best].total_us) best = s;
  auto base = std::find_if(settings.begin(), settings.end(),
                           [](const SettingData& s) { return s.setting.is_default(); });
  if (base == settings.end()) {
    out.notes.push_back(
        "NCCL's default process-wide settings were not measured: the rules and [env] are "
        "those of '" +
        settings[best].setting.id + "', not judged against NCCL's defaults");
    return best;
  }
  const size_t baseline = static_cast<size_t>(base - settings.begin());
  const std::string& base_id = settings[baseline].setting.id;
  const std::string& best_id = settings[best].setting.id;
  if (settings.size() == 1) return baseline;
  if (common.empty()) {
    out.notes.push_back("process-wide settings not compared: no size was measured under all of them");
    return baseline;
  }
  const double gain = out.scores[baseline].total_us / out.scores[best].total_us - 1.0;
  if (best != baseline && gain > o.min_gain) {
    out.notes.push_back("process-wide setting '" + best_id + "' kept: " + percent(gain) +
                        " less time than '" + base_id + "' over " + std::to_string(common.size()) +
                        " points");
    return best;
  }
  if (best != baseline)
    out.notes.push_back("process-wide setting '" + best_id + "' was best but gained only " + percent(gain) +
                        " over '" + base_id + "': below the threshold, [env] left empty");
  else
    out.notes.push_back("NCCL's default process-wide settings were best: [env] left empty");
  return baseline;
}

double best_p2p_gain(const Derivation& out) {
  for (const auto& v : out.p2p_verdicts)
    if (out.p2p_setting && v.setting == out.p2p_setting->id) return v.p2p_gain.gain;
  return 0.0;
}

// Each point-to-point setting judged against NCCL's defaults (search/p2p_setting.hpp); the exported one with
// the largest point-to-point gain joins [env] beside the rules' setting.
void choose_p2p_setting(std::span<const JournalRecord> records, const DeriveOptions& o, Derivation& out) {
  std::vector<runners::ProcessSetting> candidates;
  for (const auto& rec : records)
    if (runners::only_point_to_point(rec.setting) &&
        std::none_of(candidates.begin(), candidates.end(),
                     [&](const runners::ProcessSetting& s) { return s.id == rec.setting.id; }))
      candidates.push_back(rec.setting);
  const P2pSettingOptions p2p{o.min_gain, o.confidence};
  for (const auto& setting : candidates) {
    out.p2p_verdicts.push_back(judge_p2p_setting(records, setting.id, p2p));
    const auto& v = out.p2p_verdicts.back();
    out.notes.push_back("point-to-point setting '" + setting.id + "' " +
                        (v.exported ? "may join [env]: " : "left out of [env]: ") + v.why);
    if (v.exported && (!out.p2p_setting || v.p2p_gain.gain > best_p2p_gain(out))) out.p2p_setting = setting;
  }
  if (!out.p2p_setting) return;
  for (const auto& [name, value] : out.p2p_setting->env) out.env[name] = value;
  out.notes.push_back("[env] takes point-to-point setting '" + out.p2p_setting->id + "'");
}

void list_failures(const std::vector<SettingData>& settings, Derivation& out) {
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
}

}  // namespace

Derivation derive(std::span<const JournalRecord> records, const DeriveOptions& options) {
  const std::vector<SettingData> settings = by_setting(records);
  std::vector<SettingDecisions> decided;
  for (const auto& sd : settings) decided.push_back(decide_setting(sd, options));
  Derivation out;
  const size_t chosen = choose_setting(settings, decided, options, out);
  out.setting = settings[chosen].setting;
  out.env = out.setting.env;  // the rules below were measured under exactly this
  out.rules = decided[chosen].rules;
  mark_rule_basis(out.rules, records, out.setting);
  std::sort(out.scores.begin(), out.scores.end(),
            [](const SettingScore& a, const SettingScore& b) { return a.total_us < b.total_us; });
  if (decided[chosen].points.empty())
    throw InputError("<journal>", 0,
                     "expected measurements of NCCL's default choice under setting '" + out.setting.id +
                         "', found none that succeeded: nothing to compare candidates with");
  list_failures(settings, out);
  choose_p2p_setting(records, options, out);
  return out;
}

std::vector<std::string> undecided(std::span<const JournalRecord> records,
                                   std::span<const Collective> collectives, std::span<const Scale> scales) {
  // Per (collective, scale, bytes): bit 1 NCCL's choice ok, bit 2 a candidate measured.
  std::map<std::tuple<int, int, int, uint64_t>, int> seen;
  for (const JournalRecord& r : records) {
    const auto& m = r.measurement;
    if (r.source == "production" || !r.setting.is_default() || m.request.point_to_point) continue;
    const bool is_default = m.request.candidate.is_default();
    if (is_default && m.outcome != runners::Outcome::ok) continue;
    seen[{static_cast<int>(m.request.collective), r.scale.nodes, r.scale.ranks, m.request.bytes}] |=
        is_default ? 1 : 2;
  }
  std::vector<std::string> out;
  for (Collective c : collectives)
    for (const Scale& s : scales) {
      bool decided = false;
      for (auto it = seen.lower_bound({static_cast<int>(c), s.nodes, s.ranks, 0});
           !decided && it != seen.end() && std::get<0>(it->first) == static_cast<int>(c) &&
           std::get<1>(it->first) == s.nodes && std::get<2>(it->first) == s.ranks;
           ++it)
        decided = it->second == 3;
      if (!decided) out.push_back(std::string(nccl::name(c)) + " at " + runners::describe_shape(s));
    }
  return out;
}

std::string budget_undecided_message(const std::vector<std::string>& undecided, size_t measurements) {
  std::string what;
  for (const auto& u : undecided) what += (what.empty() ? "" : ", ") + u;
  return "the budget ended before " + what +
         " could be decided at any size (no size measured with both NCCL's own choice and a candidate): no "
         "profile written, the store's is untouched; the journal keeps the " +
         std::to_string(measurements) + " measurements: --resume with a larger --budget continues";
}

}  // namespace autotune::search
