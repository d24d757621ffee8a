#include "check/check_plan.hpp"

namespace autotune::check {

std::string_view pass_kind_name(PassKind kind) {
  switch (kind) {
    case PassKind::node:
      return "node";
    case PassKind::gpu_pairs:
      return "gpu_pairs";
    case PassKind::rails:
      return "rails";
    case PassKind::alltoall:
      return "alltoall";
    case PassKind::rings:
      return "rings";
  }
  return "node";
}

nccl::Operation pass_operation(PassKind kind) {
  if (kind == PassKind::alltoall) return nccl::Operation::alltoall;
  if (kind == PassKind::rings) return nccl::Operation::sendrecv;
  return nccl::Operation::allreduce;
}

std::string pass_label(const Pass& p) {
  const std::string shape = runners::shape_text(p.shape);
  switch (p.kind) {
    case PassKind::node:
      return "node all-reduce " + shape;
    case PassKind::gpu_pairs:
      return "GPU pairs " + shape + (p.local_offset ? " +" + std::to_string(p.local_offset) : "");
    case PassKind::rails:
      return "rails " + shape + (p.node_offset ? " +" + std::to_string(p.node_offset) : "");
    case PassKind::alltoall:
      return "all-to-all " + shape;
    case PassKind::rings:
      return "send/recv rings " + shape;
  }
  return shape;
}

std::vector<Pass> plan_passes(int nodes, int gpus) {
  std::vector<Pass> out;
  if (gpus >= 2) out.push_back({PassKind::node, {1, gpus}, 0, 0});
  if (gpus >= 4 && gpus % 2 == 0)
    for (int shift = 0; shift < 2; ++shift) out.push_back({PassKind::gpu_pairs, {1, 2}, 0, shift});
  // Pairs of nodes shifted by one; an odd count leaves one node out of each pass, so a third pass gives
  // every node two partners.
  const int rail_passes = nodes < 2 ? 0 : (nodes == 2 ? 1 : (nodes % 2 ? 3 : 2));
  for (int shift = 0; shift < rail_passes; ++shift) out.push_back({PassKind::rails, {2, 2}, shift, 0});
  if (nodes >= 2) {
    out.push_back({PassKind::alltoall, {nodes, nodes * gpus}, 0, 0});
    out.push_back({PassKind::rings, {nodes, nodes}, 0, 0});
  }
  return out;
}

runners::GroupLayout pass_layout(const Pass& p, int nodes, int gpus) {
  return runners::GroupLayout(p.shape, nodes, gpus, p.node_offset, p.local_offset);
}

}  // namespace autotune::check
