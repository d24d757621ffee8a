#include "cli/simulator_options.hpp"

#include <cstdio>
#include <string>

namespace autotune::cli {
namespace {

// As a person writes it ("0.03"), not the double's every digit (0.029999999999999999).
std::string format_noise(double noise) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", noise);
  return text;
}

}  // namespace

void add_simulator_options(po::options_description& options, SimulatorArgs& a, const char* simulate_help) {
  options.add_options()("simulate", simulate_help)(
      "example", po::value(&a.example),
      "simulator: a bundled node (h100-8x, h100-8x-2nic, a100-pcie-8x; default h100-8x)")(
      "topology", po::value(&a.topology_file),
      "simulator: a probed node (hwloc, NCCL topology XML or probe JSON)")(
      "nodes", po::value(&a.nodes)->default_value(a.nodes), "simulator: how many such nodes")(
      "seed", po::value(&a.seed)->default_value(a.seed), "simulator: noise seed")(
      "noise", po::value(&a.noise)->default_value(a.noise, format_noise(a.noise)),
      "simulator: relative noise per repetition")(
      "sim-fault", po::value(&a.faults)->composing(),
      "simulator: a sick node, repeatable: node=N,nic=K,rate=F | node=N,gpu=K,clock=F | "
      "node=N,gpu=K,nvlink=F | spine=F,beyond=N (a slow spine, crossed by communicators over more than N "
      "nodes)");
}

std::optional<sim::SimulatorSpec> simulator_spec(const po::variables_map& vm, const SimulatorArgs& a) {
  sim::SimulatorSpec spec;
  spec.example = a.example;
  spec.topology_file = a.topology_file;
  spec.nodes = a.nodes;
  spec.seed = parse_seed(a.seed, "--seed");
  spec.noise = a.noise;
  for (const auto& f : a.faults) spec.faults.push_back(sim::parse_sim_fault(f));
  const bool simulate = vm.count("simulate") > 0;
  sim::check_simulator_spec(simulate, spec);
  if (!simulate) return std::nullopt;
  return spec;
}

}  // namespace autotune::cli
