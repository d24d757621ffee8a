#pragma once
// What a calibration knows so far about one (process-wide setting, scale): the timing samples of every
// candidate at every measured size, pooled over repeated measurements, and which candidates failed. Both the
// strategies (to decide what to measure next) and the rule derivation read it. A value type; not thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "runners/runner.hpp"

namespace autotune::search {

// Candidates have no natural order; this one is total and stable (algorithm, protocol, channels; unset
// first).
using CandidateKey = std::tuple<int, int, int>;
CandidateKey key_of(const runners::Candidate& c);
runners::Candidate candidate_of(const CandidateKey& k);

// The operation a candidate really runs: forced parts as given, the rest what NCCL reported it used. Two
// candidates with the same effective choice are the same operation. nullopt when not known.
struct Choice {
  nccl::Algorithm algorithm;
  nccl::Protocol protocol;
  int channels = 0;  // 0 = not known (on GPUs the sweep hook sees NCCL's own channel count as "NCCL decides")
  bool operator==(const Choice&) const = default;
};

struct Samples {
  std::vector<double> times_us;  // pooled from every ok measurement (max over ranks per repetition)
  int measurements = 0;          // how many measurements (of any outcome) went into this
  std::optional<runners::Outcome> failure;  // the first outcome other than ok, if any
  std::string detail;
  std::optional<nccl::Algorithm> used_algorithm;
  std::optional<nccl::Protocol> used_protocol;
  int used_channels = 0;  // 0 = not reported

  bool ok() const { return !failure && !times_us.empty(); }
  // Quantile by linear interpolation between order statistics; q in [0, 1]. 0 when there are no samples.
  double quantile(double q) const;
  double median() const { return quantile(0.5); }
};

class MeasurementTable {
 public:
  // A point-to-point measurement is left out: NCCL's tuner never sees it, so no rule can come of it.
  void add(const runners::Measurement& m);

  const Samples* find(nccl::Collective c, uint64_t bytes, const runners::Candidate& candidate) const;
  // Every candidate measured at this size (the default included), or nullptr when nothing was.
  const std::map<CandidateKey, Samples>* at(nccl::Collective c, uint64_t bytes) const;
  // Sizes at which the collective has any measurement, ascending.
  std::vector<uint64_t> sizes(nccl::Collective c) const;
  std::vector<nccl::Collective> collectives() const;
  // A candidate that gave a wrong result or timed out anywhere for this collective is never to be chosen.
  bool banned(nccl::Collective c, const runners::Candidate& candidate) const;
  // The effective choice of a candidate at a size (see Choice).
  std::optional<Choice> effective(nccl::Collective c, uint64_t bytes,
                                  const runners::Candidate& candidate) const;
  // The candidate is NCCL's own choice at this size again: the algorithm and protocol NCCL's default used,
  // and the channels left to NCCL or forced to the count the default used (where the runner reports it).
  // Known from the default's measurement alone, so a strategy can skip measuring it. False when the default
  // has not been measured there.
  bool repeats_default(nccl::Collective c, uint64_t bytes, const runners::Candidate& candidate) const;

 private:
  std::map<nccl::Collective, std::map<uint64_t, std::map<CandidateKey, Samples>>> data_;
  std::map<nccl::Collective, std::set<CandidateKey>> banned_;
};

}  // namespace autotune::search
