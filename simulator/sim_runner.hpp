#pragma once
// The labelled simulator as a Runner: measurements computed from SimModel's truth with seeded noise, every
// result marked source = "simulated". It behaves like the NCCL runner where the search engine can tell:
// repetitions, max-over-ranks and mean timings, unsupported combinations, wrong results for a forced LL128
// where it is unsafe, what NCCL "used". Under mpirun each process computes its share of the simulated ranks
// and the timings are combined with MPI exactly as the NCCL runner combines real ones, so the result is the
// same as in one process (up to floating-point summation order in the mean). Not thread-safe.

#include <map>

#include "runners/process_group.hpp"
#include "runners/runner.hpp"
#include "simulator/sim_model.hpp"

namespace autotune::sim {

using runners::Measurement;
using runners::MeasureRequest;
using runners::ProcessGroup;
using runners::RunnerInfo;

class SimRunner : public runners::Runner {
 public:
  // noise: relative standard deviation of one repetition (0.03 = 3%); seed: the noise's seed.
  SimRunner(SimModel model, uint64_t seed, double noise, const ProcessGroup& processes);

  RunnerInfo info() const override;
  std::vector<Measurement> run(std::span<const MeasureRequest> batch) override;

  const SimModel& model() const { return model_; }

 private:
  SimModel model_;
  uint64_t seed_;
  double noise_;
  const ProcessGroup& processes_;
  // How often each request (its attempt included) was measured before: a repeat gets fresh noise, the same
  // on every process.
  std::map<uint64_t, uint64_t> occurrences_;
};

}  // namespace autotune::sim
