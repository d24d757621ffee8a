#pragma once
// How a job's ranks form the groups of one communicator shape, every group at once, the way a training job
// runs its tensor-, pipeline- and data-parallel communicators: nodes are taken in blocks of the shape's node
// count (starting at node_offset and wrapping around, so that a second pass pairs other nodes), and on every
// node its ranks are taken in blocks of consecutive local ranks of the shape's ranks per node (starting at
// local_offset and wrapping around, so that a second pass pairs other GPUs of a node). Group g =
// node_block * (gpus per node / ranks per node) + local_block; nodes left over when the node count does not
// divide the job's sit the shape out. Used by the NCCL runner to split its communicator (ncclCommSplit), and
// by whatever needs to name the nodes and GPUs a group covers. A value type.

#include <vector>

#include "runners/process_setting.hpp"

namespace autotune::runners {

struct GroupPlace {
  int group = -1;  // -1: this rank is in no group of the shape
  int member = 0;  // its rank within the group
};

class GroupLayout {
 public:
  // Throws InputError("<arguments>", 0, ...) when the shape does not fit: more nodes than the job has, ranks
  // per node not dividing the node's GPUs, or fewer than two ranks.
  GroupLayout(const Scale& shape, int world_nodes, int gpus_per_node, int node_offset = 0,
              int local_offset = 0);

  const Scale& shape() const { return shape_; }
  int groups() const { return node_blocks_ * local_blocks_; }
  GroupPlace place(int node, int local_rank) const;
  // The nodes and the node-local ranks a group covers, in member order.
  std::vector<int> nodes_of(int group) const;
  std::vector<int> local_ranks_of(int group) const;

 private:
  Scale shape_;
  int world_nodes_, gpus_per_node_, offset_, local_offset_;
  int node_blocks_, local_blocks_;
};

}  // namespace autotune::runners
