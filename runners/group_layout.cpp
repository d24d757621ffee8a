#include "runners/group_layout.hpp"

#include <string>

#include "common/input_error.hpp"

namespace autotune::runners {

GroupLayout::GroupLayout(const Scale& shape, int world_nodes, int gpus_per_node, int node_offset,
                         int local_offset)
    : shape_(shape), world_nodes_(world_nodes), gpus_per_node_(gpus_per_node) {
  const std::string text = shape_text(shape);
  if (shape.nodes < 1 || shape.ranks < 2 || shape.ranks % shape.nodes != 0)
    throw InputError("<arguments>", 0,
                     "a shape of at least two ranks, the same number on every node, found " + text);
  if (shape.nodes > world_nodes)
    throw InputError("<arguments>", 0,
                     "shape " + text + " needs " + std::to_string(shape.nodes) + " nodes, the job has " +
                         std::to_string(world_nodes));
  if (gpus_per_node < 1 || gpus_per_node % shape.ranks_per_node() != 0)
    throw InputError("<arguments>", 0,
                     "shape " + text + ": the ranks per node must divide the job's " +
                         std::to_string(gpus_per_node) + " ranks per node");
  offset_ = ((node_offset % world_nodes) + world_nodes) % world_nodes;
  local_offset_ = ((local_offset % gpus_per_node) + gpus_per_node) % gpus_per_node;
  node_blocks_ = world_nodes / shape.nodes;
  local_blocks_ = gpus_per_node / shape.ranks_per_node();
}

GroupPlace GroupLayout::place(int node, int local_rank) const {
  if (node < 0 || node >= world_nodes_ || local_rank < 0 || local_rank >= gpus_per_node_) return {};
  const int shifted = (node - offset_ + world_nodes_) % world_nodes_;
  const int node_block = shifted / shape_.nodes;
  if (node_block >= node_blocks_) return {};
  const int per_node = shape_.ranks_per_node();
  const int local = (local_rank - local_offset_ + gpus_per_node_) % gpus_per_node_;
  return {node_block * local_blocks_ + local / per_node,
          (shifted % shape_.nodes) * per_node + local % per_node};
}

std::vector<int> GroupLayout::nodes_of(int group) const {
  std::vector<int> out;
  if (group < 0 || group >= groups()) return out;
  const int node_block = group / local_blocks_;
  for (int i = 0; i < shape_.nodes; ++i)
    out.push_back((offset_ + node_block * shape_.nodes + i) % world_nodes_);
  return out;
}

std::vector<int> GroupLayout::local_ranks_of(int group) const {
  std::vector<int> out;
  if (group < 0 || group >= groups()) return out;
  const int per_node = shape_.ranks_per_node(), first = (group % local_blocks_) * per_node;
  for (int i = 0; i < per_node; ++i) out.push_back((local_offset_ + first + i) % gpus_per_node_);
  return out;
}

}  // namespace autotune::runners
