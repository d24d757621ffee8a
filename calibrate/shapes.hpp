#pragma once
// Which communicator shapes a calibration measures (runners::Scale: nodes x ranks per node), and with which
// operations. A training job creates several at once: tensor-parallel groups inside a node, pipeline,
// expert and data-parallel groups across nodes; each gets rules of its own. Shapes come from a list
// ("4x8,4x1:alltoall"), from a parallel layout (tp/cp/ep/dp/pp as Megatron-Core places ranks, or FSDP/HSDP),
// from node counts (the old --scales), or by default: the whole job, one node, one rank per node across all
// nodes, and the powers of two between. Pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "nccl/operation.hpp"
#include "profiles/job_layout.hpp"
#include "runners/process_setting.hpp"

namespace autotune::calibrate {

// The cluster a calibration runs on: nodes x GPUs per node.
struct World {
  int nodes = 1;
  int gpus_per_node = 1;
};

// One shape asked for by --shapes, with the operations to measure on it (empty: the calibration's
// collectives).
struct ShapeRequest {
  runners::Scale shape;
  std::vector<nccl::Operation> operations;
  bool operator==(const ShapeRequest&) const = default;
};

// "4x8,4x1:alltoall,2x8:allreduce+allgather": nodes x ranks per node, each optionally with its operations
// (nccl/operation.hpp's names joined by '+'); a shape named twice measures the operations of both. Throws
// InputError("<arguments>", 0, ...) naming `option` for a bad item or an unknown operation.
std::vector<ShapeRequest> parse_shapes(std::string_view text, const std::string& option = "--shapes");

// A job's parallel layout, in Megatron-Core's rank order "tp-cp-ep-dp-pp" (megatron/core/parallel_state.py,
// initialize_model_parallel and RankGenerator, NVIDIA/Megatron-LM as of 2026-08): tensor parallel fastest
// (consecutive ranks), then context, then data, then pipeline, so rank = ((pp_i x dp + dp_i) x cp + cp_i) x
// tp
// + tp_i. Expert groups come from a second grid over the same ranks, tp-ep-dp-pp with the expert tensor
// parallel size equal to tp (Megatron-Core's default) and no cp: expert parallelism splits the ranks that
// are data (and context) parallel in the dense grid, so ep must divide dp x cp and the expert data-parallel
// size is dp x cp / ep. Global rank r runs on node r / gpus_per_node. HSDP shards over `shard` consecutive
// ranks and replicates across the shards; FSDP shards over the whole job; neither takes another size.
struct ParallelLayout {
  int tp = 1, cp = 1, ep = 1, pp = 1;
  int dp = 0;          // 0: the ranks left over (world / (tp x cp x pp))
  int hsdp_shard = 0;  // > 0: an HSDP layout
  bool fsdp = false;   // an FSDP layout: the whole job
  std::string text;    // as given, for the journal and the profile
};

// "tp=8,pp=2,dp=4", "tp=2,ep=8,pp=2", "tp=4,cp=2", "hsdp=8", "fsdp". Throws InputError naming --parallelism.
ParallelLayout parse_parallelism(std::string_view text);

// One kind of communicator the layout creates (profiles/job_layout.hpp): kind, shape, how many groups of it
// run at once, and the operations that kind runs in training.
using LayoutGroup = profiles::LayoutGroup;
runners::Scale shape_of(const LayoutGroup& group);

// What each kind runs: tensor groups all-reduce, all-gather and reduce-scatter (sequence parallel); data and
// expert-data groups all-reduce, reduce-scatter and all-gather (gradients, the distributed optimizer);
// context groups send/recv around the ring and all-gather; pipeline groups send/recv between neighbouring
// stages; the embedding group (first and last stage) all-reduces; expert groups all-to-all (token dispatch
// and combine); HSDP shards and FSDP all-gather and reduce-scatter, HSDP replicas all-reduce.
std::vector<nccl::Operation> kind_operations(std::string_view kind);

// The communicators of `layout` on `world`, one entry per kind that has more than one rank, in the order tp,
// cp, dp, ep, edp, pp, embedding (or shard, replicate; or fsdp). Throws InputError when the layout does not
// fill the world exactly, ep does not divide the data-parallel size, or a group would be uneven across nodes.
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
