#pragma once
// Which communicators `check` measures on a job of N nodes x G GPUs, each a shape measured with every
// group at once (runners/group_layout.hpp), and what each pass can pin down:
//  - node: one group per node (1xG), the node's own all-reduce over NVLink or PCIe;
//  - GPU pairs: pairs of GPUs of a node (1x2), twice with the pairs shifted by one GPU, so that every GPU is
//    paired with two others and a slow GPU is the one both of its pairs share (G even, at least 4);
//  - rails: one GPU per node on two nodes (2x1), every rail of every node pair at once, twice (three times
//    for an odd node count) with the node pairs shifted, so that a slow NIC is on the node both of its
//    pairs share (N at least 2; with two nodes the one pair cannot tell which);
//  - all-to-all: the whole job as one group (NxG), the exchange an expert-parallel job waits on first;
//  - send/recv rings: one GPU per node on every node (Nx1), every rail at once, each rank sending to the
//    next node's GPU on its rail: pipeline traffic, and a NIC slow only in point-to-point work shows here
//    (both need N at least 2).
// Value types and pure functions.

#include <string>
#include <vector>

#include "nccl/operation.hpp"
#include "runners/group_layout.hpp"
#include "runners/process_setting.hpp"

namespace autotune::check {

enum class PassKind { node, gpu_pairs, rails, alltoall, rings };
std::string_view pass_kind_name(PassKind kind);  // "node", "gpu_pairs", "rails", "alltoall", "rings"
// What a pass runs: all-reduce, all-to-all for the all-to-all pass, sendrecv for the rings.
nccl::Operation pass_operation(PassKind kind);

struct Pass {
  PassKind kind = PassKind::node;
  runners::Scale shape;
  int node_offset = 0;
  int local_offset = 0;
  bool operator==(const Pass&) const = default;
};

// "node all-reduce 1x8", "GPU pairs 1x2 +1", "rails 2x1 +1", "all-to-all 4x8", "send/recv rings 4x1".
std::string pass_label(const Pass& pass);

// The passes for a job, in the order they run. Empty for one node of one GPU.
std::vector<Pass> plan_passes(int nodes, int gpus_per_node);

// How a pass's groups map to nodes and GPUs on the job.
runners::GroupLayout pass_layout(const Pass& pass, int nodes, int gpus_per_node);

}  // namespace autotune::check
