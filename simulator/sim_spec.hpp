#pragma once
// What the labelled simulator is asked to model, as every command that simulates takes it (`--example` or
// `--topology`, `--nodes`, `--seed`, `--noise`, `--sim-fault`): one value, checked in one place, and the node
// it names. Value types; simulated_node reads a file: thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/sim_fault.hpp"
#include "topology/model.hpp"

namespace autotune::sim {

// The node the simulator models when neither a bundled example nor a probed file is named.
inline constexpr const char* kDefaultExample = "h100-8x";

// The most nodes a simulated job spans: beyond the largest clusters NCCL runs on (32,768 GPUs of 8 a node),
// and a bound that keeps a simulated check or calibration within minutes instead of exhausting memory.
inline constexpr int kMaxSimulatedNodes = 4096;

struct SimulatorSpec {
  std::string example;           // a bundled node (topology/examples.hpp); empty: kDefaultExample
  std::string topology_file;     // a probed node (hwloc or NCCL topology XML, probe JSON); not with `example`
  int nodes = 1;                 // how many such nodes the simulated job spans
  uint64_t seed = 1;             // the noise's seed
  double noise = 0.03;           // relative standard deviation of one repetition, in [0, 1)
  std::vector<SimFault> faults;  // sick nodes (--sim-fault)
};

// Throws InputError("<arguments>", 0, ...) for a noise outside [0, 1); without `simulate`, for any of the
// simulator's node, nodes or faults given ("... describe the simulator: add --simulate"); with it, for both a
// probed file and an example, or nodes outside 1..kMaxSimulatedNodes. The faults are checked against the node
// by describe_cluster (sim_cluster.hpp).
void check_simulator_spec(bool simulate, const SimulatorSpec& spec);

// The node the spec names: the probed file, or the bundled example. *stem (when given) is what a simulated
// cluster is named after: the file's stem or the example's name. Throws InputError for both, or a bad file.
topology::Topology simulated_node(const SimulatorSpec& spec, std::string* stem = nullptr);

}  // namespace autotune::sim
