// Which passes check runs on a job, and that they can pin a device: every GPU in two pairs with different
// partners, every node in two rail pairs with different partners (three passes on an odd node count).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "check/check_plan.hpp"

using namespace autotune;
using namespace autotune::check;

namespace {

// For every (node, local rank): the sets of (node, local rank) it shared a group with, one per pass of
// `kind`.
std::map<std::pair<int, int>, std::vector<std::set<std::pair<int, int>>>> partners(PassKind kind, int nodes,
                                                                                   int gpus) {
  std::map<std::pair<int, int>, std::vector<std::set<std::pair<int, int>>>> out;
  for (const auto& p : plan_passes(nodes, gpus)) {
    if (p.kind != kind) continue;
    const auto layout = pass_layout(p, nodes, gpus);
    for (int g = 0; g < layout.groups(); ++g) {
      std::set<std::pair<int, int>> members;
      for (int n : layout.nodes_of(g))
        for (int l : layout.local_ranks_of(g)) members.insert({n, l});
      for (const auto& m : members) out[m].push_back(members);
    }
  }
  return out;
}

}  // namespace

TEST_CASE(
    "health: check's passes on 8 x 8 GPUs: the node, two pairings of GPUs, two of nodes, all-to-all, rings",
    "[check][health]") {
  const auto plan = plan_passes(8, 8);
  REQUIRE(plan.size() == 7);
  CHECK(plan[0] == Pass{PassKind::node, {1, 8}, 0, 0});
  CHECK(plan[1] == Pass{PassKind::gpu_pairs, {1, 2}, 0, 0});
  CHECK(plan[2] == Pass{PassKind::gpu_pairs, {1, 2}, 0, 1});
  CHECK(plan[3] == Pass{PassKind::rails, {2, 2}, 0, 0});
  CHECK(plan[4] == Pass{PassKind::rails, {2, 2}, 1, 0});
  CHECK(pass_label(plan[2]) == "GPU pairs 1x2 +1");
  CHECK(pass_label(plan[4]) == "rails 2x1 +1");
  // The point-to-point baselines: the whole job's all-to-all, and a send/recv ring per rail across every
  // node.
  CHECK(plan[5] == Pass{PassKind::alltoall, {8, 64}, 0, 0});
  CHECK(plan[6] == Pass{PassKind::rings, {8, 8}, 0, 0});
  CHECK(pass_label(plan[5]) == "all-to-all 8x8");
  CHECK(pass_label(plan[6]) == "send/recv rings 8x1");
  CHECK(pass_operation(plan[5].kind) == nccl::Operation::alltoall);
  CHECK(pass_operation(plan[6].kind) == nccl::Operation::sendrecv);
  CHECK(pass_operation(plan[3].kind) == nccl::Operation::allreduce);
  const auto one = pass_layout(plan[5], 8, 8), rings = pass_layout(plan[6], 8, 8);
  CHECK(one.groups() == 1);
  REQUIRE(rings.groups() == 8);
  CHECK(rings.nodes_of(3).size() == 8);
  CHECK(rings.local_ranks_of(3) == std::vector<int>{3});
}

TEST_CASE("health: every GPU and every node's rail is in two groups whose other members differ",
          "[check][health]") {
  for (auto [nodes, gpus] : std::vector<std::pair<int, int>>{{8, 8}, {3, 4}, {5, 8}, {7, 2}, {4, 1}}) {
    INFO(nodes << " nodes x " << gpus << " GPUs");
    if (gpus >= 4)
      for (const auto& [device, groups] : partners(PassKind::gpu_pairs, nodes, gpus)) {
        REQUIRE(groups.size() == 2);
        CHECK(groups[0] != groups[1]);
      }
    for (const auto& [device, groups] : partners(PassKind::rails, nodes, gpus)) {
      REQUIRE(groups.size() >= 2);
      std::set<std::set<std::pair<int, int>>> distinct(groups.begin(), groups.end());
      CHECK(distinct.size() >= 2);
    }
    CHECK(static_cast<int>(partners(PassKind::rails, nodes, gpus).size()) == nodes * gpus);
  }
}

TEST_CASE("health: small jobs get only the passes that fit them", "[check][health]") {
  CHECK(plan_passes(1, 1).empty());
  CHECK(plan_passes(1, 2) == std::vector<Pass>{{PassKind::node, {1, 2}, 0, 0}});
  CHECK(plan_passes(2, 1) == std::vector<Pass>{{PassKind::rails, {2, 2}, 0, 0},  // one pair: one pass
                                               {PassKind::alltoall, {2, 2}, 0, 0},
                                               {PassKind::rings, {2, 2}, 0, 0}});
  CHECK(plan_passes(1, 6).size() == 3);          // no network: no all-to-all or rings either
  CHECK(plan_passes(3, 3).size() == 1 + 3 + 2);  // odd GPUs: no pairs; odd nodes: three rail passes
}
