#include "calibrate/verify.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::calibrate {

using runners::Candidate;
using runners::MeasureRequest;
using runners::Outcome;
using runners::Scale;
namespace {

// Verify's requests are numbered after any calibration's: the simulator, seeded with the request's attempt,
// then measures them afresh instead of replaying the calibration's noise.
constexpr int kFirstAttempt = 1 << 20;

runners::Scale scale_of(const profiles::Rule& r, const profiles::Profile& p) {
  const int nodes = r.nodes ? r.nodes->min : std::max(1, p.cluster.nodes);
  const int ranks = r.ranks ? r.ranks->min : nodes * std::max(1, p.cluster.gpus_per_node);
  return {nodes, ranks};
}

std::string percent(double gain) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", gain * 100.0);
  return buf;
}

runners::Candidate candidate_of(const profiles::Rule& r) {
  return {r.algorithm, r.protocol, r.channels};
}

// The verdict from what was measured so far, and whether more repetitions could change it.
struct Judgement {
  Verdict verdict = Verdict::not_checked;
  std::string detail;
  search::GainInterval now;
  bool settled = true;
};

// A failure of the rule's choice or of NCCL's default at one of the sizes decides by itself.
std::optional<Judgement> judge_failures(const search::MeasurementTable& t, nccl::Collective c,
                                        const runners::Candidate& cand, const std::vector<uint64_t>& sizes) {
  for (uint64_t b : sizes) {
    const search::Samples* def = t.find(c, b, runners::Candidate{});
    const search::Samples* s = t.find(c, b, cand);
    const std::string at = " at " + human_byte_size(b);
    if (!def || !def->ok())
      return Judgement{
          Verdict::not_checked,
          "NCCL's default did not run" + at + (def && !def->detail.empty() ? ": " + def->detail : ""),
          {},
          true};
    if (!s || s->ok()) continue;
    if (*s->failure == Outcome::unsupported)
      return Judgement{
          Verdict::no_longer_wins, "NCCL no longer accepts the choice" + at + ": " + s->detail, {}, true};
    return Judgement{
        Verdict::now_loses, std::string(runners::name(*s->failure)) + at + ": " + s->detail, {}, true};
  }
  return std::nullopt;
}

Judgement judge(const search::MeasurementTable& t, const profiles::Rule& r,
                const std::vector<uint64_t>& sizes, const VerifyOptions& o) {
  const runners::Candidate cand = candidate_of(r);
  if (auto failed = judge_failures(t, r.collective, cand, sizes)) return *failed;
  if (std::all_of(sizes.begin(), sizes.end(),
                  [&](uint64_t b) { return t.repeats_default(r.collective, b, cand); }))
    return {Verdict::no_longer_wins, "NCCL's default now runs this choice itself", {}, true};
  std::vector<search::SamplePair> pairs;
  for (uint64_t b : sizes)
    pairs.push_back(
        {t.find(r.collective, b, runners::Candidate{})->times_us, t.find(r.collective, b, cand)->times_us});
  Judgement j;
  j.now = search::gain_interval(pairs, o.derive.confidence);
  for (size_t k = 0; k < sizes.size(); ++k) {
    const search::GainInterval at =
        search::gain_interval(std::span<const search::SamplePair>(&pairs[k], 1), o.derive.single_confidence);
    if (at.high < 0.0) {
      j.verdict = Verdict::now_loses;
      j.detail = "slower than NCCL's default at " + human_byte_size(sizes[k]) + ": " + percent(at.gain) +
                 " (" + percent(at.low) + ".." + percent(at.high) + ")";
      return j;
    }
  }
  if (j.now.beats(o.derive.min_gain)) {
    j.verdict = Verdict::still_wins;
    j.detail = "its gain's interval lies past the threshold of " + percent(o.derive.min_gain);
  } else if (j.now.high < 0.0) {
    j.verdict = Verdict::now_loses;
    j.detail = "slower than NCCL's default beyond the noise";
  } else {
    j.verdict = Verdict::no_longer_wins;
    j.detail = "no gain past the threshold of " + percent(o.derive.min_gain) + " any more";
    j.settled = !j.now.straddles(o.derive.min_gain) && !j.now.straddles(0.0);
  }
  return j;
}

// Measures one rule on its scale's runner, doubling the repetitions while the verdict is in doubt.
RuleCheck check_rule(runners::Runner& runner, const profiles::Rule& r, const runners::Scale& scale,
                     const VerifyOptions& o, uint64_t& measurements) {
  RuleCheck check{r, scale, Verdict::not_checked, {}, profiles::gain_of(r), {}, 0, ""};
  check.sizes = verify_sizes(r.min_bytes, r.max_bytes, 4ull * static_cast<uint64_t>(std::max(1, scale.ranks)),
                             o.sizes_per_rule);
  const runners::Candidate cand = candidate_of(r);
  search::MeasurementTable t;
  for (int round = 0; round <= o.repetition_rounds; ++round) {
    std::vector<runners::MeasureRequest> batch;
    for (uint64_t b : check.sizes)
      for (const runners::Candidate& c : {runners::Candidate{}, cand}) {
        batch.push_back({r.collective, b, c, o.repetitions << round});
        batch.back().attempt = kFirstAttempt + round;
      }
    for (auto& m : runner.run(batch)) t.add(m);
    measurements += batch.size();
    const Judgement j = judge(t, r, check.sizes, o);
    check.verdict = j.verdict;
    check.detail = j.detail;
    check.now = j.now;
    if (j.settled) break;
  }
  for (uint64_t b : check.sizes)
    if (const search::Samples* s = t.find(r.collective, b, cand))
      check.samples += static_cast<int>(s->times_us.size());
  return check;
}

}  // namespace

std::string_view name(Verdict v) {
  switch (v) {
    case Verdict::still_wins:
      return "still wins";
    case Verdict::no_longer_wins:
      return "no longer wins";
    case Verdict::now_loses:
      return "now loses";
    case Verdict::not_checked:
      break;
  }
  return "not checked";
}

int VerifyResult::count(Verdict v) const {
  return static_cast<int>(
      std::count_if(rules.begin(), rules.end(), [&](const RuleCheck& c) { return c.verdict == v; }));
}

std::vector<uint64_t> verify_sizes(uint64_t min_bytes, uint64_t max_bytes, uint64_t granularity, int count) {
  const uint64_t g = std::max<uint64_t>(1, granularity);
  const uint64_t first = (min_bytes + g - 1) / g * g, last = max_bytes / g * g;
  const bool aligned = first >= min_bytes && first <= last;
  auto fit = [&](long double x) {
    if (!aligned) return std::clamp<uint64_t>(static_cast<uint64_t>(x), min_bytes, max_bytes);
    const uint64_t v = static_cast<uint64_t>(std::llround(x / g)) * g;
    return std::clamp(v, first, last);
  };
  std::set<uint64_t> out;
  const int n = std::max(1, count);
  const long double lo = std::log(static_cast<long double>(std::max<uint64_t>(1, min_bytes)));
  const long double hi = std::log(static_cast<long double>(std::max<uint64_t>(1, max_bytes)));
  for (int k = 0; k < n; ++k) out.insert(fit(std::exp(lo + (hi - lo) * (k + 0.5L) / n)));
  return {out.begin(), out.end()};
}

VerifyResult verify_profile(const profiles::Profile& profile, const VerifyOptions& o,
                            const VerifyRunnerFactory& runners) {
  VerifyResult result;
  result.rules.resize(profile.rules.size());
  std::map<runners::Scale, std::vector<size_t>> by_scale;
  for (size_t i = 0; i < profile.rules.size(); ++i)
    by_scale[scale_of(profile.rules[i], profile)].push_back(i);
  for (const auto& [scale, indices] : by_scale) {
    std::unique_ptr<runners::Runner> runner;
    std::string why = "nothing here measures it";
    try {
      runner = runners(scale);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (runner && result.runner.empty()) {
      const runners::RunnerInfo info = runner->info();
      result.runner = info.description;
      result.source = info.source;
      result.nccl_version = info.nccl_version;
    }
    for (size_t i : indices) {
      RuleCheck& check = result.rules[i];
      check = RuleCheck{
          profile.rules[i], scale, Verdict::not_checked, {}, profiles::gain_of(profile.rules[i]), {}, 0, ""};
      if (!runner) {
        check.detail = "cannot measure " + runners::describe_shape(scale) + " here: " + why;
        continue;
      }
      try {
        check = check_rule(*runner, profile.rules[i], scale, o, result.measurements);
      } catch (const InputError&) {
        throw;
      } catch (const std::exception& e) {
        check.detail = std::string("the runner failed: ") + e.what();
        runner.reset();  // the rest of this scale is not checked either
      }
    }
  }
  return result;
}

VerifyRunnerFactory verify_runners(const VerifyTarget& target, const profiles::Profile& profile) {
  if (target.simulate && !target.topology)
    throw InputError("<arguments>", 0,
                     "--simulate: expected a node to simulate (--example or --topology), found none");
  // One runner per shape, as tune makes them: on GPUs every group of the shape split from this job's ranks
  // (a shape the job cannot hold fails to start, and its rules are not checked), in the simulator the shape
  // on the node given.
  return [target, env = profile.env](const runners::Scale& s) -> std::unique_ptr<runners::Runner> {
    measure::RunnerOptions ro;
    ro.simulate = target.simulate;
    ro.topology = target.topology;
    ro.nodes = s.nodes;
    ro.shape = s;
    ro.seed = target.seed;
    ro.noise = target.noise;
    ro.process_env = env;
    return target.make_runner(ro);
  };
}

void check_verify_request(const VerifyTarget& target, const VerifyOptions& o) {
  if (o.repetitions < 1 || o.repetitions > 10000)
    throw InputError("<arguments>", 0,
                     "--reps: expected 1 to 10000 timed repetitions per measurement, found " +
                         std::to_string(o.repetitions));
  if (!(target.noise >= 0.0 && target.noise < 1.0))
    throw InputError("<arguments>", 0,
                     "--noise: expected a relative noise per repetition in [0, 1) such as 0.03, found " +
                         std::to_string(target.noise));
  if (!(o.derive.min_gain >= 0.0))
    throw InputError("<arguments>", 0, "--min-gain: expected a gain of at least 0");
}

std::map<std::string, std::string> environment_to_set(const profiles::Profile& profile,
                                                      const std::map<std::string, std::string>& current) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : profile.env) {
    auto it = current.find(k);
    if (it == current.end()) {
      out[k] = v;
    } else if (it->second != v) {
      throw InputError("<env " + k + ">", 0,
                       "expected the profile's value '" + v +
                           "' (what its rules were calibrated under), found '" + it->second +
                           "': unset it, or run verify under `nccl-autotune run --profile ... --`");
    }
  }
  return out;
}

profiles::Profile without_failed_rules(const profiles::Profile& profile, const VerifyResult& result) {
  profiles::Profile out = profile;
  out.rules.clear();
  for (size_t i = 0; i < profile.rules.size(); ++i) {
    const Verdict v = i < result.rules.size() ? result.rules[i].verdict : Verdict::not_checked;
    if (v == Verdict::still_wins || v == Verdict::not_checked) out.rules.push_back(profile.rules[i]);
  }
  return out;
}

}  // namespace autotune::calibrate
