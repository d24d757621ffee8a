#pragma once
// The labelled simulator as a Runner: measurements computed from SimModel's truth with seeded noise, every
// result marked source = "simulated". It behaves like the NCCL runner where the search engine can tell:
// repetitions, max-over-ranks and mean timings, unsupported combinations, wrong results for a forced LL128
// where it is unsafe, what NCCL "used". Given the groups of a shape (sim_groups.hpp), it measures them all at
// once as the NCCL runner does: each group's time from its own model, the slowest group's as the
// measurement's, each group's in Measurement::group_times_us. Under mpirun each process computes its share
// of the simulated ranks and the timings are combined with MPI exactly as the NCCL runner combines real
// ones, so the result is the same as in one process (up to floating-point summation order in the mean).
// Noise: a factor per repetition every rank shares, a small straggler factor per rank, and across nodes an
// occasional slow repetition (a fabric shared with other jobs). Not thread-safe.

#include <map>
#include <optional>
#include <vector>

#include "runners/process_group.hpp"
#include "runners/runner.hpp"
#include "simulator/sim_model.hpp"

namespace autotune::sim {

class SimRunner : public runners::Runner {
 public:
  // noise: relative standard deviation of one repetition (0.03 = 3%); seed: the noise's seed.
  SimRunner(SimModel model, uint64_t seed, double noise, const runners::ProcessGroup& processes);
  // Every group of a shape at once (at least one, all of the same shape); per-group times are reported.
  SimRunner(std::vector<SimModel> groups, uint64_t seed, double noise,
            const runners::ProcessGroup& processes);

  runners::RunnerInfo info() const override;
  std::vector<runners::Measurement> run(std::span<const runners::MeasureRequest> batch) override;

  // The first group's model (the only one without a shape).
  const SimModel& model() const { return groups_.front(); }
  const std::vector<SimModel>& groups() const { return groups_; }

 private:
  std::vector<std::vector<std::optional<SimChoice>>> resolve_batch(
      std::span<const runners::MeasureRequest> batch, std::vector<runners::Measurement>& out) const;
  void describe_result(const std::vector<std::optional<SimChoice>>& choices, runners::Measurement& m,
                       int ranks) const;

  std::vector<SimModel> groups_;
  bool per_group_ = false;
  uint64_t seed_;
  double noise_;
  const runners::ProcessGroup& processes_;
  // How often each request (its attempt included) was measured before: a repeat gets fresh noise, the same
  // on every process.
  std::map<uint64_t, uint64_t> occurrences_;
};

}  // namespace autotune::sim
