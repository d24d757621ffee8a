#pragma once
// The cluster a dry run on GPUs plans for, without starting anything on them: GPUs per node from the probe of
// this node (or a recorded one), ranks per node from mpirun/srun when this process runs under it, and the
// node count from --nodes, the launcher's words, or the Slurm allocation. A real calibration learns the same
// from its runner; the dry run must not start one (a login node has no GPUs to start it on).

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/shapes.hpp"
#include "runners/process_group.hpp"
#include "topology/model.hpp"

namespace autotune::calibrate {

struct PlanWorldInput {
  std::optional<int> nodes;                   // --nodes
  std::filesystem::path topology_file;        // --topology: a node's probe instead of this node's
  std::function<topology::Topology()> probe;  // this node (topology::probe_live in the CLI)
  std::vector<std::string> launcher;          // the orchestrator's launcher words; empty: none
  bool orchestrator = true;                   // false: this process runs under mpirun/srun itself
  const runners::ProcessGroup* processes = nullptr;
  std::map<std::string, std::string> env;  // SLURM_NNODES
};

struct PlanWorld {
  World world;
  std::string node_origin;  // "--nodes", "the launcher (srun -N 8)", ...
  std::string gpu_origin;   // "the probe of this node", "--topology node.xml", "mpirun/srun: 4 per node"
};

// Throws InputError("<arguments>", 0, ...) when the node count cannot be told (a launcher that does not say
// it: give --nodes) or the node has no GPUs to plan for (give --topology of a GPU node).
PlanWorld plan_world(const PlanWorldInput& input);

}  // namespace autotune::calibrate
