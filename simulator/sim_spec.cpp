#include "simulator/sim_spec.hpp"

#include <filesystem>

#include "common/input_error.hpp"
#include "topology/examples.hpp"
#include "topology/reader.hpp"

namespace autotune::sim {

void check_simulator_spec(bool simulate, const SimulatorSpec& spec) {
  if (!(spec.noise >= 0.0 && spec.noise < 1.0))
    throw InputError("<arguments>", 0,
                     "--noise: expected a relative noise per repetition in [0, 1) such as 0.03, found " +
                         std::to_string(spec.noise));
  if (!simulate) {
    if (!spec.example.empty() || !spec.topology_file.empty() || spec.nodes != 1 || !spec.faults.empty())
      throw InputError(
          "<arguments>", 0,
          "--example, --topology, --nodes and --sim-fault describe the simulator: add --simulate");
    return;
  }
  if (!spec.example.empty() && !spec.topology_file.empty())
    throw InputError("<arguments>", 0, "expected either --example or --topology, found both");
  if (spec.nodes < 1)
    throw InputError("<arguments>", 0, "--nodes: expected at least 1, found " + std::to_string(spec.nodes));
  if (spec.nodes > kMaxSimulatedNodes)
    throw InputError("<arguments>", 0,
                     "--nodes: expected at most " + std::to_string(kMaxSimulatedNodes) +
                         " simulated nodes, found " + std::to_string(spec.nodes));
}

topology::Topology simulated_node(const SimulatorSpec& spec, std::string* stem) {
  if (!spec.example.empty() && !spec.topology_file.empty())
    throw InputError("<arguments>", 0, "expected either --example or --topology, found both");
  if (!spec.topology_file.empty()) {
    if (stem) *stem = std::filesystem::path(spec.topology_file).stem().string();
    return topology::read_topology_file(spec.topology_file);
  }
  const std::string name = spec.example.empty() ? kDefaultExample : spec.example;
  if (stem) *stem = name;
  return topology::load_example(name);
}

}  // namespace autotune::sim
