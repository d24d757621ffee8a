#pragma once
// How a runner measures, whatever it is: the process-wide settings its job runs under and the measurement
// loop's parameters. The NCCL runner obeys every field; the simulator models process_env and ignores the
// loop parameters it has no use for. A value type.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "runners/process_setting.hpp"

namespace autotune::runners {

struct MeasureOptions {
  // The process-wide settings this job runs under (NCCL_IB_HCA, NCCL_CROSS_NIC, ...). The simulator models
  // their effect; for the NCCL runner they must already be in this process's environment (NCCL reads them
  // once per process), and make_runner checks that they are.
  std::map<std::string, std::string> process_env;
  // The communicators measured: every group of this shape at once, split from the job's ranks (as a training
  // job runs its tensor-, pipeline- and data-parallel groups), timed by the slowest group. nullopt: one
  // communicator of every rank of the job.
  std::optional<Scale> shape;
  int node_offset = 0;   // where the node blocks of the groups start (runners/group_layout.hpp)
  int local_offset = 0;  // where the blocks of local ranks start on every node

  std::string plugin_path;      // our tuner plugin, which forces candidates; empty = find_plugin()
  int warmup_iterations = 5;    // untimed operations before each candidate
  int iterations = 0;           // operations per timed repetition; 0 = scaled with size (measure_plan)
  bool cuda_graph = false;      // capture the timed loop as a CUDA graph (removes launch overhead)
  bool in_place = false;        // out-of-place by default (bench: one runner per half)
  uint64_t max_bytes = 0;       // largest size of any batch (buffers are allocated once); 0 = grow on demand
  double watchdog_scale = 1.0;  // multiplies the per-operation time bound (watchdog)
  bool check_results = true;    // verify every candidate's output after timing
};

}  // namespace autotune::runners
