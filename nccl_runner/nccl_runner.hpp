#pragma once
// The real runner: NCCL collectives on this process's GPUs, timed with CUDA events. Under mpirun/srun one
// process drives one GPU (the local rank picks it) and rank 0's ncclUniqueId is broadcast with MPI; started
// alone, one process drives every GPU of the node through ncclCommInitAll and ncclGroupStart/End. Each
// candidate is forced through our tuner plugin's sweep hook in this same process (NCCL_TUNER_PLUGIN points at
// it before the first NCCL call), so one communicator serves every algorithm/protocol/channels candidate;
// the default candidate is NCCL's own choice. After timing each candidate's output is checked exactly
// (runners/collective_check.hpp); an operation past the watchdog's bound aborts the communicator, reports
// timed_out and the next request runs on a fresh one.
// Not thread-safe: call from the main thread (MPI's and the plugin hook's state are process-wide).
// Built into the NCCL runner module (runners/modules.hpp), the only code that links libnccl and libcudart.

#include <memory>

#include "runners/measure_options.hpp"
#include "runners/process_group.hpp"
#include "runners/runner.hpp"

namespace autotune::nccl_runner {

class NcclRunner : public runners::Runner {
 public:
  // Throws std::runtime_error("no CUDA device: <CUDA's reason>") without a usable GPU, and when the
  // communicators cannot be created. A missing or mismatched plugin is not fatal: forced candidates then
  // report `failed` with the reason and the default is still measured.
  NcclRunner(const runners::MeasureOptions& options, const runners::ProcessGroup& processes);
  ~NcclRunner() override;
  NcclRunner(const NcclRunner&) = delete;
  NcclRunner& operator=(const NcclRunner&) = delete;

  runners::RunnerInfo info() const override;
  std::vector<runners::Measurement> run(std::span<const runners::MeasureRequest> batch) override;

 private:
  struct State;  // CUDA and NCCL handles stay out of this header
  std::unique_ptr<State> state_;
};

}  // namespace autotune::nccl_runner
