#pragma once
// `verify`: whether a profile's rules still hold on the cluster as it is now, after an NCCL or driver
// upgrade or as a periodic check. Each rule's range is measured again at a few sizes (the centres of its
// thirds in log size: not its very ends, where a calibration puts an edge because the gain has fallen to
// the threshold there) against NCCL's default there, at the rule's scale and under the profile's [env],
// through the runners `tune` uses; where the answer is in doubt the repetitions double, round after round,
// as in a calibration. The verdict, from the gain's bootstrap interval over those sizes
// (search/gain_interval.hpp, at the calibration's confidence for a run of sizes):
//  - still wins: the whole interval lies past --min-gain;
//  - now loses: the rule is slower than NCCL's default beyond the noise (the interval lies below zero,
//    overall or at one of the sizes), or its choice now gives wrong results or hangs;
//  - no longer wins: anything between (no gain past the threshold any more, NCCL's default now runs the
//    same choice itself, or NCCL no longer accepts the choice).
// Not thread-safe; measures on the calling thread.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/runner_factory.hpp"
#include "profiles/profile.hpp"
#include "runners/runner.hpp"
#include "search/derive.hpp"
#include "search/gain_interval.hpp"

namespace autotune::calibrate {

struct VerifyOptions {
  search::DeriveOptions derive;  // min_gain, and the confidence of the interval
  int repetitions = 5;
  int repetition_rounds = 4;  // rounds of doubled repetitions where the verdict is in doubt
  int sizes_per_rule = 3;
};

enum class Verdict { still_wins, no_longer_wins, now_loses, not_checked };
std::string_view name(Verdict v);  // "still wins", "no longer wins", "now loses", "not checked"

struct RuleCheck {
  profiles::Rule rule;
  runners::Scale scale;  // where it was measured
  Verdict verdict = Verdict::not_checked;
  search::GainInterval now;          // its gain over NCCL's default now, over the sizes measured
  std::optional<double> calibrated;  // the gain the profile records (profiles::gain_of)
  std::vector<uint64_t> sizes;
  int samples = 0;     // timed repetitions of the rule's choice, over its sizes
  std::string detail;  // the verdict's reason, in words
};

struct VerifyResult {
  std::vector<RuleCheck> rules;  // in the profile's order
  std::string runner;            // what measured, for people
  std::string source;            // "measured" or "simulated"
  std::string nccl_version;      // the NCCL that measured, when the runner says
  uint64_t measurements = 0;
  int count(Verdict v) const;
};

// The runner for one shape, with the profile's [env] in place. One that cannot be made (a shape this job
// cannot hold) throws or returns nullptr, and the rules of that shape are not checked.
using VerifyRunnerFactory = std::function<std::unique_ptr<runners::Runner>(const runners::Scale&)>;

VerifyResult verify_profile(const profiles::Profile& profile, const VerifyOptions& options,
                            const VerifyRunnerFactory& runners);

// What measures: the labelled simulator over a node, or the GPUs this job runs on (every group of a shape
// split from the job's ranks, as tune measures shapes). `make_runner` is the seam tests replace.
struct VerifyTarget {
  bool simulate = false;
  std::optional<topology::Topology> topology;  // the simulator's node
  uint64_t seed = 1;
  double noise = 0.03;
  std::function<std::unique_ptr<runners::Runner>(const measure::RunnerOptions&)> make_runner =
      measure::make_runner;
};
VerifyRunnerFactory verify_runners(const VerifyTarget& target, const profiles::Profile& profile);

// Throws InputError (exit status 2) for values that cannot work, before anything is measured.
void check_verify_request(const VerifyTarget& target, const VerifyOptions& options);

// On GPUs NCCL reads the profile's [env] from this process's environment: the variables to set (those not
// set yet). Throws InputError for one already set to another value (the job would not measure what the
// profile was calibrated under).
std::map<std::string, std::string> environment_to_set(const profiles::Profile& profile,
                                                      const std::map<std::string, std::string>& current);

// The profile without the rules that no longer win or now lose; the ones that still win or were not checked
// keep their calibration's evidence.
profiles::Profile without_failed_rules(const profiles::Profile& profile, const VerifyResult& result);

// The sizes verify measures in [min_bytes, max_bytes]: the centres of `count` equal parts of the range in
// log size, as multiples of `granularity` inside the range where there are any (fewer when they coincide).
std::vector<uint64_t> verify_sizes(uint64_t min_bytes, uint64_t max_bytes, uint64_t granularity, int count);

}  // namespace autotune::calibrate
