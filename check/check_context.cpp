#include "check/check_context.hpp"

#include <stdexcept>

#include "check/node_records.hpp"
#include "common/host_name.hpp"
#include "common/input_error.hpp"
#include "measure/runner_factory.hpp"
#include "simulator/sim_cluster.hpp"
#include "topology/reader.hpp"

namespace autotune::check {

CheckContext simulated_context(const measure::RunnerOptions& simulated) {
  if (!simulated.simulate || !simulated.topology)
    throw InputError("<arguments>", 0, "expected a node for the simulator to check, found none");
  if (simulated.nodes < 1)
    throw InputError("<arguments>", 0,
                     "--nodes: expected at least 1, found " + std::to_string(simulated.nodes));
  const topology::Topology& node = *simulated.topology;
  sim::describe_cluster(node, simulated.nodes, simulated.faults);  // refuses what it cannot model, now
  CheckContext c;
  c.nodes.assign(static_cast<size_t>(simulated.nodes), NodeRecord{"", node});
  c.gpus_per_node = static_cast<int>(node.gpus.size());
  c.source = "simulated";
  c.make_runner = [simulated](const Pass& pass) {
    measure::RunnerOptions o = simulated;
    o.shape = pass.shape;
    o.node_offset = pass.node_offset;
    o.local_offset = pass.local_offset;
    return measure::make_runner(o);
  };
  return c;
}

NodeRecord live_node_record() {
  topology::LiveOptions o;
  o.health = true;
  return {host_name(), topology::probe_live(o)};
}

CheckContext job_context(const runners::ProcessGroup& processes,
                         const std::function<NodeRecord()>& probe_this_node, uint64_t max_bytes,
                         double watchdog_scale) {
  CheckContext c;
  c.nodes = gather_node_records(processes, probe_this_node);
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    const auto& t = c.nodes[n].topology;
    if (!t.gpus.empty()) continue;
    std::string why;
    for (const auto& s : t.sources)
      if (s.name == "cuda" && !s.available) why = " (cuda: " + s.detail + ")";
    throw std::runtime_error(
        "node " + std::to_string(n) + (c.nodes[n].host.empty() ? "" : " (" + c.nodes[n].host + ")") +
        ": its probe found no GPU" + why + "; check measures on GPUs (--simulate checks the simulator)");
  }
  c.gpus_per_node = processes.distributed() ? processes.local_size()
                                            : static_cast<int>(c.nodes.front().topology.gpus.size());
  c.source = "measured";
  c.make_runner = [max_bytes, watchdog_scale](const Pass& pass) {
    measure::RunnerOptions o;
    o.watchdog_scale = watchdog_scale;
    o.shape = pass.shape;
    o.node_offset = pass.node_offset;
    o.local_offset = pass.local_offset;
    o.max_bytes = max_bytes;
    return measure::make_runner(o);
  };
  return c;
}

}  // namespace autotune::check
