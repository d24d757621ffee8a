#pragma once
// The one place that decides what measures: the labelled simulator (RunnerOptions::simulate) or real NCCL
// collectives on this process's GPUs. The search engine and `nccl-autotune bench` both call make_runner.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "runners/measure_options.hpp"
#include "runners/runner.hpp"
#include "simulator/sim_fault.hpp"
#include "simulator/sim_model.hpp"
#include "simulator/sim_spec.hpp"
#include "topology/model.hpp"

namespace autotune::measure {

struct RunnerOptions : runners::MeasureOptions {
  bool simulate = false;
  // The probed node (every node is assumed alike). Required for the simulator; the NCCL runner ignores it.
  std::optional<topology::Topology> topology;
  // simulator: how many such nodes in the job, of which `shape` takes its groups (the NCCL runner sees what
  // mpirun started)
  int nodes = 1;
  uint64_t seed = 1;                  // simulator: the noise's seed
  double noise = 0.03;                // simulator: relative standard deviation of one repetition
  sim::SimDeviations deviations;      // simulator: how its truth differs from NCCL's own estimate
  std::vector<sim::SimFault> faults;  // simulator: sick nodes (--sim-fault)
};

// Throws InputError for options that cannot work (simulate without a topology, nodes < 1, a bad
// process_env value, a fault on a node or device the simulated cluster does not have), std::runtime_error
// when the NCCL runner cannot start ("no CUDA device: ...", a build without NCCL, the plugin not found).
std::unique_ptr<runners::Runner> make_runner(const RunnerOptions& options);

// The options of a runner on the simulator `spec` describes: simulate, topology (`node` when given, else the
// spec's node read now), nodes, seed, noise and faults; the rest at their defaults. Throws InputError as
// sim::simulated_node does.
RunnerOptions simulated_runner_options(const sim::SimulatorSpec& spec,
                                       std::optional<topology::Topology> node = std::nullopt);

}  // namespace autotune::measure
