#pragma once
// Which communicator shapes a calibration measures (runners::Scale: nodes x ranks per node). A training job
// creates several at once: tensor-parallel groups inside a node, pipeline pairs and data-parallel groups with
// one rank per node across nodes; each gets rules of its own. Shapes come from a list ("4x8,4x1"), from a
// parallel layout (tp/pp/dp as Megatron-style launchers place ranks, or FSDP/HSDP), from node counts (the old
// --scales), or by default: the whole job, one node, one rank per node across all nodes, and the powers of
// two between. Pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "runners/process_setting.hpp"

namespace autotune::calibrate {

// The cluster a calibration runs on: nodes x GPUs per node.
struct World {
  int nodes = 1;
  int gpus_per_node = 1;
};

// "4x8,4x1,2x1": nodes x ranks per node. Throws InputError("<arguments>", 0, ...) naming `option` for a bad
// item.
std::vector<runners::Scale> parse_shapes(std::string_view text, const std::string& option = "--shapes");

// A job's parallel layout. Megatron-style rank order: tensor parallel innermost (consecutive ranks), then
// data parallel, then pipeline (rank = pp_index * tp * dp + dp_index * tp + tp_index); global rank r runs on
// node r / gpus_per_node. HSDP shards over `shard` consecutive ranks and replicates across the shards; FSDP
// shards over the whole job.
struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1;
  int hsdp_shard = 0;  // > 0: an HSDP layout (tp, pp, dp unused)
  bool fsdp = false;   // an FSDP layout: the whole job
};

// "tp=8,pp=2,dp=4", "hsdp=8", "fsdp". Throws InputError naming --parallelism.
ParallelLayout parse_parallelism(std::string_view text);

// One kind of communicator the layout creates: its shape and how many such groups run at once.
struct LayoutGroup {
  std::string role;  // "tp", "pp", "dp", "shard", "replicate", "fsdp"
  runners::Scale shape;
  int groups = 0;
  bool operator==(const LayoutGroup&) const = default;
};

// The communicators of `layout` on `world`, one entry per role that has more than one rank, in the order
// tp, dp, pp (or shard, replicate). Throws InputError when the layout does not fill the world exactly
// (tp x pp x dp must equal nodes x GPUs per node) or a group would be uneven across nodes.
std::vector<LayoutGroup> layout_groups(const ParallelLayout& layout, const World& world);

// The default: the whole job, one node, one rank per node across all nodes, and the powers of two between
// (n x GPUs per node and n x 1 for n = 2, 4, ... below the node count); without duplicates, one-rank
// communicators left out (NCCL does not consult a tuner for them).
std::vector<runners::Scale> default_shapes(const World& world);

// Throws InputError unless `shape` can be measured on `world` with every group of it at once: at most the
// world's nodes, ranks per node dividing its GPUs per node, more than one rank. (Nodes left over when the
// node count does not divide the world's sit the shape out.)
void check_shape(const runners::Scale& shape, const World& world, const std::string& option);

}  // namespace autotune::calibrate
