#pragma once
// The one place that decides what measures: the labelled simulator (RunnerOptions::simulate) or real NCCL
// collectives on this process's GPUs. The search engine and `nccl-autotune bench` both call make_runner.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "topology/model.hpp"
#include "tuner/runner.hpp"
#include "tuner/sim_model.hpp"

namespace autotune::tuner {

struct RunnerOptions {
  bool simulate = false;
  // The probed node (every node is assumed alike). Required for the simulator; the NCCL runner ignores it.
  std::optional<topology::Topology> topology;
  int nodes = 1;             // simulator: how many such nodes (the NCCL runner sees what mpirun started)
  uint64_t seed = 1;         // simulator: the noise's seed
  double noise = 0.03;       // simulator: relative standard deviation of one repetition
  SimDeviations deviations;  // simulator: how its truth differs from NCCL's own estimate
  // The process-wide settings this job runs under (NCCL_IB_HCA, NCCL_CROSS_NIC, ...). The simulator models
  // their effect; for the NCCL runner the orchestrator must already have exported them before this process
  // started (NCCL reads them once per process), and make_runner checks that they match the environment.
  std::map<std::string, std::string> process_env;

  // NCCL runner only.
  std::string plugin_path;      // our tuner plugin; empty = locate_plugin()
  int warmup_iterations = 5;    // untimed operations before each candidate
  int iterations = 0;           // operations per timed repetition; 0 = scaled with size (measure_plan)
  bool cuda_graph = false;      // capture the timed loop as a CUDA graph (removes launch overhead)
  bool in_place = false;        // nccl-tests measures out-of-place by default
  uint64_t max_bytes = 0;       // largest size of any batch (buffers are allocated once); 0 = grow on demand
  double watchdog_scale = 1.0;  // multiplies the per-operation time bound (watchdog)
  bool check_results = true;    // verify every candidate's output after timing
};

// Throws InputError for options that cannot work (simulate without a topology, nodes < 1, a bad
// process_env value), std::runtime_error when the NCCL runner cannot start ("no CUDA device: ...", a build
// without NCCL, the plugin not found).
std::unique_ptr<Runner> make_runner(const RunnerOptions& options);

}  // namespace autotune::tuner
