#include "calibrate/plan_world.hpp"

#include "calibrate/orchestrator.hpp"
#include "common/input_error.hpp"
#include "common/text.hpp"
#include "topology/reader.hpp"

namespace autotune::calibrate {
namespace {

[[noreturn]] void cannot_plan(const std::string& what) {
  throw InputError("<arguments>", 0, "--dry-run: " + what);
}

std::optional<int> slurm_nodes(const std::map<std::string, std::string>& env) {
  auto it = env.find("SLURM_NNODES");
  if (it == env.end()) return std::nullopt;
  return parse_positive(it->second);
}

void count_nodes(const PlanWorldInput& in, PlanWorld& out) {
  if (in.nodes) {
    if (*in.nodes < 1) cannot_plan("--nodes: expected at least 1, found " + std::to_string(*in.nodes));
    out.world.nodes = *in.nodes;
    out.node_origin = "--nodes";
  } else if (!in.orchestrator && in.processes) {
    // mpirun/srun placed this job: its processes say how many nodes it spans.
    out.world.nodes = std::max(1, in.processes->size() / std::max(1, in.processes->local_size()));
    out.node_origin = "this job's processes";
  } else if (auto n = launcher_nodes(in.launcher)) {
    out.world.nodes = *n;
    out.node_origin = "the launcher";
  } else if (auto s = slurm_nodes(in.env)) {
    out.world.nodes = *s;
    out.node_origin = "the Slurm allocation (SLURM_NNODES)";
  } else if (in.launcher.empty()) {
    out.world.nodes = 1;
    out.node_origin = "this node alone (no launcher)";
  } else {
    cannot_plan("the launcher does not say how many nodes it starts: give --nodes N");
  }
}

}  // namespace

PlanWorld plan_world(const PlanWorldInput& in) {
  PlanWorld out;
  count_nodes(in, out);
  if (!in.orchestrator && in.processes && in.processes->local_size() > 1) {
    out.world.gpus_per_node = in.processes->local_size();  // one rank per GPU
    out.gpu_origin = "this job's ranks per node";
    return out;
  }
  // The launcher's tasks per node are the ranks each node runs, whatever this node has.
  const int per_node = in.orchestrator ? launcher_ranks_per_node(in.launcher).value_or(0) : 0;
  const bool recorded = !in.topology_file.empty();
  const topology::Topology node = recorded   ? topology::read_topology_file(in.topology_file)
                                  : in.probe ? in.probe()
                                             : topology::Topology{};
  if (per_node > 0 && static_cast<int>(node.gpus.size()) != per_node) {
    out.world.gpus_per_node = per_node;
    out.gpu_origin = "the launcher's ranks per node";
    return out;
  }
  if (node.gpus.empty())
    cannot_plan(
        std::string(recorded ? "the node in " + in.topology_file.string() : "the probe of this node") +
        ": expected GPUs to plan for, found none (give --topology FILE: a GPU node's probe)");
  out.world.gpus_per_node = static_cast<int>(node.gpus.size());
  out.gpu_origin = recorded ? "--topology " + in.topology_file.string() : "the probe of this node";
  return out;
}

}  // namespace autotune::calibrate
