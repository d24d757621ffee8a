#pragma once
// `nccl-autotune check --slurm-health`: the wiring of check/slurm_health.hpp for one node (its options, the
// node's findings from check, scontrol through the POSIX launcher, the store's record, one output line).

#include <string>

#include "cli/options.hpp"

namespace autotune::cli {

struct SlurmHealthArgs {
  std::string node, input, store;
};

// Adds --slurm-health, --node, --input and --store to `options`.
void add_slurm_health_options(po::options_description& options, SlurmHealthArgs& args);

// Exit status: 0 when nothing blocks, 1 when a finding blocks (the node is then drained unless an
// administrator drained it already). `bytes` and `reps` size the local collective on a node with GPUs.
int run_slurm_health(const po::variables_map& vm, const SlurmHealthArgs& args, uint64_t bytes, int reps);

}  // namespace autotune::cli
