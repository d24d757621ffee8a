#pragma once
// Internal to the NCCL runner: the state behind NcclRunner (the GPUs this process drives, their
// communicators, streams, events and buffers), shared by nccl_runner.cpp (communicators, launches, timing)
// and runner_checks.cpp (what a request may force, the results' check, combining the ranks' times). Not
// thread-safe.

#include <cuda_runtime.h>
#include <nccl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nccl_runner/nccl_runner.hpp"
#include "nccl_runner/sweep_hook_client.hpp"
#include "runners/bandwidth.hpp"
#include "runners/collective_check.hpp"
#include "runners/group_layout.hpp"
#include "runners/lock_step.hpp"

namespace autotune::nccl_runner {

// Throw StepFailure(failed) naming `what` and CUDA's or NCCL's reason.
void cuda_check(cudaError_t e, const char* what);
void nccl_check(ncclResult_t r, const char* what, ncclComm_t comm = nullptr);

// One GPU this process drives, and its rank in the job.
struct Device {
  int id = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  int group = 0;               // which group of the shape it measures in (-1: none, it sits the shape out)
  int member = 0;              // its rank in that group's communicator
  ncclComm_t world = nullptr;  // every rank of the job; `comm` is split from it for a shape
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  void* send = nullptr;  // both `capacity` bytes
  void* recv = nullptr;
  cudaGraphExec_t graph = nullptr;
};

struct NcclRunner::State {
  runners::MeasureOptions options;
  const runners::ProcessGroup& processes;
  SweepHookClient hook;
  std::vector<Device> devices;
  int ranks = 1;  // the job's
  int nodes = 1;
  int local_size = 1;
  int members = 1;                             // ranks of each measured communicator
  std::optional<runners::GroupLayout> layout;  // set when a shape smaller than the job is measured
  std::string gpu_model;
  std::string nccl_version;
  uint64_t capacity = 0;
  bool comms_ok = false;
  int rebuilds = 0;

  State(const runners::MeasureOptions& o, const runners::ProcessGroup& p, const std::string& plugin)
      : options(o), processes(p), hook(plugin) {}
  ~State();

  void open_devices();  // this process's GPUs, streams and events; throws runtime_error
  void count_nodes();   // collective: every process calls it
  void create_comms(runners::LockStep& steps);
  void place_devices();  // each device's group for the shape; collective
  void split_comms(runners::LockStep& steps);
  bool active(const Device& d) const { return d.group >= 0; }
  void drop_comms(bool abort);
  void free_graphs();
  void ensure_capacity(uint64_t bytes);

  // Where one operation reads and writes on `d` (in place: inside the one receive buffer, as nccl-tests
  // does).
  std::pair<const void*, void*> pointers(const Device& d, nccl::Operation op,
                                         const runners::BufferCounts& counts) const;
  void issue(Device& d, nccl::Operation op, const runners::BufferCounts& counts);
  // start event, `ops` operations (or the captured graph), stop event, on every device.
  void launch(nccl::Operation op, const runners::BufferCounts& counts, int ops, bool use_graph);
  void capture(nccl::Operation op, const runners::BufferCounts& counts, int ops);
  // Waits for every stop event under the watchdog; throws StepFailure(timed_out) after aborting.
  void wait(uint64_t bytes, int ops);
  std::vector<double> elapsed_us(int ops);  // per device, one operation
  double agree_max(double value) const;

  runners::Measurement measure(const runners::MeasureRequest& r);
  // What the sweep hook saw NCCL run (into m); StepFailure(unsupported) when NCCL refused a forced candidate
  // or never asked the tuner.
  void note_hook(const runners::Candidate& cand, runners::Measurement& m);
  void combine_times(const std::vector<std::vector<double>>& per_device, runners::Measurement& m) const;
  std::optional<std::pair<runners::Outcome, std::string>> precheck(const runners::MeasureRequest& r) const;
  void check_results(const runners::MeasureRequest& r, const runners::BufferCounts& counts);
};

}  // namespace autotune::nccl_runner
