#include "simulator/sim_groups.hpp"

#include "runners/group_layout.hpp"

namespace autotune::sim {

std::vector<SimCluster> group_clusters(const SimCluster& world, const runners::Scale& shape, int node_offset,
                                       int local_offset) {
  const runners::GroupLayout layout(shape, world.nodes, world.node_gpus, node_offset, local_offset);
  const SimCluster base = shape_cluster(world, shape.ranks_per_node(), true);
  std::vector<SimCluster> out;
  for (int g = 0; g < layout.groups(); ++g) {
    SimCluster c = base;
    c.nodes = shape.nodes;
    c.node_ids = layout.nodes_of(g);
    c.first_gpu = layout.local_ranks_of(g).front();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace autotune::sim
