#pragma once
// From measurements to a profile's content. Per (setting, scale, collective, size) the fastest candidate by
// median time that is not NCCL's own choice again is the size's winner; neighbouring sizes with the same
// winner whose gain beats the threshold form a run, and a run becomes a rule only where the lower end of its
// gain interval (search/gain_interval.hpp) beats the threshold too: at `confidence` for a run over several
// sizes, at the stricter `single_confidence` for a run of one (a lone size is the likeliest fluke of noise).
// A run that fails loses its weaker end until it passes or is gone. A rule's edges sit where the evidence
// puts them: where, interpolated in log size between the two measured sizes around the edge, the rule's
// margin over the threshold meets the other side's. The process-wide setting that is best over everything
// is kept only if it beats NCCL's defaults by the threshold, and the rules are always those measured under
// the setting the profile exports. Jobs of point-to-point settings alone (runners::only_point_to_point) are
// never the rules' setting: each is judged by search/p2p_setting.hpp, and the one whose point-to-point gain
// is largest among those that may be exported joins [env]. Pure functions of the journal's records, so a
// profile can be re-derived with other thresholds; the strategies ask the same code where more repetitions
// could change the answer.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "profiles/profile.hpp"
#include "search/gain_interval.hpp"
#include "search/journal.hpp"
#include "search/p2p_setting.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::search {

struct DeriveOptions {
  double min_gain = 0.03;           // a rule must be this much faster than the default (time ratio - 1)
  double confidence = 0.90;         // a rule over several sizes: its interval at this level beats min_gain
  double single_confidence = 0.98;  // a rule resting on one measured size
};

// The decision at one measured size, before and after the run-level test.
struct SizeDecision {
  uint64_t bytes = 0;
  bool default_ok = false;
  std::optional<runners::Candidate> winner;  // the fastest candidate that is not NCCL's default again
  // The next fastest that passed the result check: the profile records it as the rule's runner_up, which
  // [online] explore may try in production where the two are close.
  std::optional<runners::Candidate> runner_up;
  double winner_us = 0.0;
  double runner_up_us = 0.0;
  double default_us = 0.0;
  GainInterval gain;  // the winner's over the default at this size, at single_confidence
  // The winner's gain estimate beats the threshold: it may join a run (the run-level test decides).
  bool provisional = false;
  // Set by decide_collective: the rule that holds at this size after the run-level test.
  std::optional<runners::Candidate> rule;
  double time_us() const { return rule ? winner_us : default_us; }
  // The fastest median here, NCCL's default included; 0 when the default was not measured.
  double best_us() const { return winner && winner_us < default_us ? winner_us : default_us; }
  // What runs under the final decision (the rule's choice, or what NCCL used by default); nullopt when
  // unknown.
  std::optional<Choice> choice;
};

// nccl-tests' bus bandwidth of one operation of `bytes` taking time_us, in GB/s (0 for a time <= 0).
double busbw_gbps(nccl::Collective c, int ranks, uint64_t bytes, double time_us);

// The decision at one size, without the run-level test (rule stays unset; choice is the default's).
SizeDecision decide(const MeasurementTable& table, nccl::Collective c, uint64_t bytes,
                    const DeriveOptions& options);

struct DerivedRule {
  profiles::Rule rule;  // with its evidence: gain and interval, sizes, samples, busbw
  runners::Scale scale;
  GainInterval gain;
  int measured_sizes = 0;
};

// One collective of one (setting, scale): every measured size's decision (rule set where a rule holds) and
// the rules.
struct CollectiveDecisions {
  std::vector<SizeDecision> sizes;  // ascending; only sizes where the default was measured
  std::vector<DerivedRule> rules;
};
CollectiveDecisions decide_collective(const MeasurementTable& table, nccl::Collective c,
                                      const runners::Scale& scale, const DeriveOptions& options);

// One question a doubt asks: does `interval` end on one side of `threshold`? More repetitions narrow the
// interval around its estimate; the rounds give a question up when even their cap would leave the threshold
// inside it (repetition_rounds.hpp).
struct DoubtQuestion {
  GainInterval interval;
  double threshold = 0.0;
  int samples = 0;  // the fewer repetitions of its two sides; 0 when one side was not measured there yet
  // Its answer decides whether a rule holds here (a gain against the threshold, a run reaching a
  // neighbour): never given up, as a gain's estimate moves more than its interval narrows and could cross
  // the threshold before the cap. False where a rule holds either way (two best both past the threshold, a
  // rule's interval already past it): given up when the cap could not settle it.
  bool decides_a_rule = true;
};

// Where more repetitions could change the answer, and of which candidates (NCCL's default included).
struct Doubt {
  nccl::Collective collective = nccl::Collective::allreduce;
  uint64_t bytes = 0;
  std::vector<runners::Candidate> candidates;
  std::string why;
  std::vector<DoubtQuestion> questions;  // every reason this size is in doubt
};
// A size whose winner's interval holds the threshold while its estimate is at least half of it; a size where
// the two best candidates both beat the threshold and cannot be told apart; a neighbour a run could reach.
// An interval of zero width (the same time in every repetition: a noise-free runner) is never in doubt:
// repetitions cannot move it.
std::vector<Doubt> doubts(const MeasurementTable& table, const std::vector<nccl::Collective>& collectives,
                          const DeriveOptions& options);

struct FailedCandidate {
  std::string setting;
  runners::Scale scale;
  nccl::Collective collective = nccl::Collective::allreduce;
  runners::Candidate candidate;
  runners::Outcome outcome = runners::Outcome::failed;
  std::string detail;
  std::vector<uint64_t> sizes;
};

struct SettingScore {
  runners::ProcessSetting setting;
  double total_us = 0.0;  // sum of the decided times over the points every setting measured
  int points = 0;
};

struct Derivation {
  runners::ProcessSetting setting;         // whose measurements the rules come from
  std::map<std::string, std::string> env;  // the profile's [env]: setting.env, empty for NCCL's defaults
  std::vector<SettingScore> scores;        // one per setting measured, best first
  std::vector<DerivedRule> rules;
  std::vector<FailedCandidate> failed;  // unsupported ones are not failures and are not listed
  std::vector<std::string> notes;       // why the env was or was not kept, and the like
  // Every point-to-point setting's verdict, in the journal's order, and the one exported (its env is in
  // `env` too); none when no job set point-to-point settings alone.
  std::vector<P2pSettingVerdict> p2p_verdicts;
  std::optional<runners::ProcessSetting> p2p_setting;
};

// The rules and [env] always come from one setting: NCCL's defaults, or another that beats them by the
// threshold; without measurements under NCCL's defaults, the best setting measured, said so in the notes.
// Throws InputError when there is nothing to derive from (no ok measurement of NCCL's default choice).
// Records whose source is "production" (what `learn` folded in from jobs' telemetry) are not calibration
// measurements and are left out.
Derivation derive(std::span<const JournalRecord> records, const DeriveOptions& options);

// A calibration under a budget decides a (collective, scale) only where some size was measured, under NCCL's
// process-wide defaults, both with NCCL's own choice and with a candidate (ok or refused by NCCL). Empty when
// every (collective, scale) of the plan was decided somewhere; else each one that was not ("allreduce at 1
// node x 8 GPUs"). A budget that leaves any undecided must not publish: its profile would replace the
// store's rules with NCCL's choice where nothing was compared.
std::vector<std::string> undecided(std::span<const JournalRecord> records,
                                   std::span<const nccl::Collective> collectives,
                                   std::span<const runners::Scale> scales);

// The error for undecided() with a budget: what was not decided, the measurements kept, how to go on.
std::string budget_undecided_message(const std::vector<std::string>& undecided, size_t measurements);

}  // namespace autotune::search
