// Communicator shapes: lists, Megatron-style and FSDP/HSDP layouts computed from the rank order, the default
// set, and what can be measured on a cluster.
#include <catch2/catch.hpp>

#include "calibrate/shapes.hpp"
#include "common/input_error.hpp"

using namespace autotune::calibrate;
using autotune::InputError;
using autotune::runners::Scale;

TEST_CASE("shapes: a list of nodes x ranks per node") {
  CHECK(parse_shapes("4x8,4x1,2x1") == std::vector<Scale>{{4, 32}, {4, 4}, {2, 2}});
  CHECK(parse_shapes("1x8,1x8") == std::vector<Scale>{{1, 8}});
  for (const char* bad : {"", "4x", "x8", "4x0", "0x8", "4*8", "4x8,", "4x8x2", "-1x8"})
    CHECK_THROWS_WITH(parse_shapes(bad), Catch::Contains("--shapes: expected shapes NODESxRANKS_PER_NODE"));
}

TEST_CASE("shapes: by default the whole job, one node, one rank per node, and the powers of two between") {
  CHECK(default_shapes({4, 8}) == std::vector<Scale>{{1, 8}, {2, 2}, {2, 16}, {4, 4}, {4, 32}});
  CHECK(default_shapes({1, 8}) == std::vector<Scale>{{1, 8}});
  CHECK(default_shapes({8, 4}) ==
        std::vector<Scale>{{1, 4}, {2, 2}, {2, 8}, {4, 4}, {4, 16}, {8, 8}, {8, 32}});
}

TEST_CASE("shapes: a 3D-parallel Megatron layout's communicators, from its rank order") {
  // 4 nodes x 8 GPUs, TP 8 (a node), DP 2, PP 2: DP and PP groups each take one rank per node.
  auto g = layout_groups(parse_parallelism("tp=8,pp=2,dp=2"), {4, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", {1, 8}, 4}, {"dp", {2, 2}, 16}, {"pp", {2, 2}, 16}});
  // 8 nodes, DP 4: the data-parallel all-reduce runs on 16 groups of 4 nodes x 1 at once.
  g = layout_groups(parse_parallelism("tp=8,pp=2,dp=4"), {8, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", {1, 8}, 8}, {"dp", {4, 4}, 16}, {"pp", {2, 2}, 32}});
  // TP 4 inside a node: DP partners are the other half of the same node.
  g = layout_groups(parse_parallelism("tp=4,dp=2"), {1, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", {1, 4}, 2}, {"dp", {1, 2}, 4}});
}

TEST_CASE("shapes: FSDP and HSDP layouts") {
  CHECK(layout_groups(parse_parallelism("fsdp"), {4, 8}) == std::vector<LayoutGroup>{{"fsdp", {4, 32}, 1}});
  CHECK(layout_groups(parse_parallelism("hsdp=8"), {4, 8}) ==
        std::vector<LayoutGroup>{{"shard", {1, 8}, 4}, {"replicate", {4, 4}, 8}});
}

TEST_CASE("shapes: layouts that do not fill the job or are uneven across nodes are refused") {
  CHECK_THROWS_WITH(layout_groups(parse_parallelism("tp=8,dp=2"), {4, 8}),
                    Catch::Contains("tp x pp x dp = 16 must equal the job's 4 x 8 = 32 ranks"));
  // 2 nodes x 6: TP 4 puts ranks 4-7 on both nodes and 0-3 on one: groups of two shapes.
  CHECK_THROWS_AS(layout_groups(parse_parallelism("tp=4,dp=3"), {2, 6}), InputError);
  CHECK_THROWS_WITH(layout_groups(parse_parallelism("hsdp=5"), {1, 8}), Catch::Contains("does not divide"));
  for (const char* bad : {"tp=8,,dp=2", "tp=0", "tp", "ep=2", "tp=8;dp=2"})
    CHECK_THROWS_WITH(parse_parallelism(bad), Catch::Contains("--parallelism: expected tp=N"));
}

TEST_CASE("shapes: what a cluster can measure with all groups at once") {
  CHECK_NOTHROW(check_shape({4, 4}, {4, 8}, "--shapes"));
  CHECK_NOTHROW(check_shape({3, 3}, {4, 8}, "--shapes"));  // the fourth node sits it out
  CHECK_THROWS_WITH(check_shape({8, 8}, {4, 8}, "--shapes"),
                    Catch::Contains("needs 8 nodes, the cluster has 4"));
  CHECK_THROWS_WITH(check_shape({1, 3}, {4, 8}, "--shapes"), Catch::Contains("must divide the 8 GPUs"));
  CHECK_THROWS_WITH(check_shape({1, 1}, {4, 8}, "--shapes"), Catch::Contains("one rank"));
}
