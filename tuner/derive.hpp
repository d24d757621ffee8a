#pragma once
// From measurements to a profile's content: per (setting, scale, collective, size) the winner by median time
// becomes a rule only where it beats NCCL's default by more than the threshold and more than the noise; sizes
// with the same decision merge into byte ranges whose edges sit between measured sizes; the process-wide
// setting that is best over everything is kept only if it beats NCCL's defaults by the threshold. Pure
// functions of the journal's records, so a profile can be re-derived with other thresholds.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "profiles/profile.hpp"
#include "tuner/journal.hpp"
#include "tuner/strategy_samples.hpp"

namespace autotune::tuner {

using nccl::Collective;
using runners::Candidate;
using runners::Outcome;
using runners::ProcessSetting;
using runners::Scale;

struct DeriveOptions {
  double min_gain = 0.03;  // a rule must be this much faster than the default (time ratio - 1)
};

// The decision at one measured size.
struct SizeDecision {
  uint64_t bytes = 0;
  bool default_ok = false;
  std::optional<Candidate> rule;  // set when a candidate beats the default by threshold and noise
  Candidate best;                 // the fastest candidate by median that may be chosen (may be the default)
  double best_us = 0.0;
  double default_us = 0.0;
  double rule_us = 0.0;  // median of the rule's candidate (when rule)
  // The next fastest candidate by median that passed the result check (ok, never failed at this scale) and
  // runs another operation than `best`: the profile records it as the rule's runner_up, which [online]
  // explore may try in production where the two are close.
  std::optional<Candidate> runner_up;
  double runner_up_us = 0.0;
  // What runs under this decision (the rule's choice, or what NCCL used by default); nullopt when unknown.
  std::optional<Choice> choice;
  double time_us() const { return rule ? rule_us : default_us; }
};

// Noise test: the winner's interquartile range lies wholly below the default's. With five repetitions that
// tolerates one outlier on each side, where comparing full min..max ranges would let one slow repetition of
// the winner veto a real gain.
bool clearly_faster(const Samples& winner, const Samples& baseline);

// nccl-tests' bus bandwidth of one operation of `bytes` taking time_us, in GB/s (0 for a time <= 0).
double busbw_gbps(Collective c, int ranks, uint64_t bytes, double time_us);

SizeDecision decide(const MeasurementTable& table, Collective c, uint64_t bytes, double min_gain);

struct DerivedRule {
  profiles::Rule rule;
  Scale scale;
  double mean_gain = 0.0;  // over the measured sizes in the range (time ratio - 1)
  int measured_sizes = 0;
};

struct FailedCandidate {
  std::string setting;
  Scale scale;
  Collective collective = Collective::allreduce;
  Candidate candidate;
  Outcome outcome = Outcome::failed;
  std::string detail;
  std::vector<uint64_t> sizes;
};

struct SettingScore {
  ProcessSetting setting;
  double total_us = 0.0;  // sum of the decided times over the points every setting measured
  int points = 0;
};

struct Derivation {
  ProcessSetting setting;                  // whose measurements the rules come from
  std::map<std::string, std::string> env;  // the profile's [env]: empty unless a setting beat the default
  std::vector<SettingScore> scores;        // one per setting measured, best first
  std::vector<DerivedRule> rules;
  std::vector<FailedCandidate> failed;  // unsupported ones are not failures and are not listed
  std::vector<std::string> notes;       // why the env was or was not kept, and the like
};

// Throws InputError when there is nothing to derive from (no ok measurement of the default). Records whose
// source is "production" (what `learn` folded in from jobs' telemetry) are not calibration measurements and
// are left out.
Derivation derive(std::span<const JournalRecord> records, const DeriveOptions& options);

// Merges a collective's per-size decisions into rules for one scale (exposed for tests).
std::vector<DerivedRule> merge_decisions(Collective c, const Scale& scale,
                                         const std::vector<SizeDecision>& sizes,
                                         const MeasurementTable& table);

}  // namespace autotune::tuner
