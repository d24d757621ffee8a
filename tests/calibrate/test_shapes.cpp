// Communicator shapes: lists, Megatron-style and FSDP/HSDP layouts computed from the rank order, the default
// set, and what can be measured on a cluster.
#include <catch2/catch.hpp>

#include "calibrate/shapes.hpp"
#include "common/input_error.hpp"

using namespace autotune::calibrate;
using autotune::InputError;
using autotune::runners::Scale;

using autotune::nccl::Operation;

TEST_CASE("shapes: a list of nodes x ranks per node") {
  CHECK(parse_shapes("4x8,4x1,2x1") == std::vector<ShapeRequest>{{{4, 32}, {}}, {{4, 4}, {}}, {{2, 2}, {}}});
  CHECK(parse_shapes("1x8,1x8") == std::vector<ShapeRequest>{{{1, 8}, {}}});
  for (const char* bad : {"", "4x", "x8", "4x0", "0x8", "4*8", "4x8,", "4x8x2", "-1x8", ":alltoall"})
    CHECK_THROWS_WITH(parse_shapes(bad), Catch::Contains("--shapes: expected shapes NODESxRANKS_PER_NODE"));
}

TEST_CASE("shapes: a shape may name the operations it runs, and a shape named twice runs both lists") {
  CHECK(parse_shapes("4x1:alltoall,2x8:allreduce+allgather") ==
        std::vector<ShapeRequest>{{{4, 4}, {Operation::alltoall}},
                                  {{2, 16}, {Operation::allreduce, Operation::allgather}}});
  CHECK(parse_shapes("2x1:sendrecv,2x1:AllReduce+sendrecv") ==
        std::vector<ShapeRequest>{{{2, 2}, {Operation::sendrecv, Operation::allreduce}}});
  // Named once without operations: the calibration's collectives, whatever else it was named with.
  CHECK(parse_shapes("2x1:alltoall,2x1") == std::vector<ShapeRequest>{{{2, 2}, {}}});
  for (const char* bad : {"4x1:alltoal", "4x1:", "4x1:allreduce+"})
    CHECK_THROWS_WITH(parse_shapes(bad), Catch::Contains("--shapes: expected operations such as"));
  CHECK_THROWS_WITH(parse_shapes("4x1:bcast", "--shapes"), Catch::Contains("found 'bcast'"));
}

TEST_CASE("shapes: by default the whole job, one node, one rank per node, and the powers of two between") {
  CHECK(default_shapes({4, 8}) == std::vector<Scale>{{1, 8}, {2, 2}, {2, 16}, {4, 4}, {4, 32}});
  CHECK(default_shapes({1, 8}) == std::vector<Scale>{{1, 8}});
  CHECK(default_shapes({8, 4}) ==
        std::vector<Scale>{{1, 4}, {2, 2}, {2, 8}, {4, 4}, {4, 16}, {8, 8}, {8, 32}});
}

namespace {

const std::vector<Operation> kTensor = {Operation::allreduce, Operation::allgather, Operation::reducescatter};
const std::vector<Operation> kData = {Operation::allreduce, Operation::reducescatter, Operation::allgather};
const std::vector<Operation> kPipeline = {Operation::sendrecv};
const std::vector<Operation> kEmbedding = {Operation::allreduce};

}  // namespace

TEST_CASE("shapes: a 3D-parallel Megatron layout's communicators, from its rank order") {
  // 4 nodes x 8 GPUs, TP 8 (a node), DP 2, PP 2: DP and PP groups each take one rank per node; the embedding
  // group of two stages is the pipeline group itself.
  auto g = layout_groups(parse_parallelism("tp=8,pp=2,dp=2"), {4, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", 1, 8, 4, kTensor},
                                      {"dp", 2, 2, 16, kData},
                                      {"pp", 2, 2, 16, kPipeline},
                                      {"embedding", 2, 2, 16, kEmbedding}});
  // 8 nodes, DP 4: the data-parallel all-reduce runs on 16 groups of 4 nodes x 1 at once.
  g = layout_groups(parse_parallelism("tp=8,pp=2,dp=4"), {8, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", 1, 8, 8, kTensor},
                                      {"dp", 4, 4, 16, kData},
                                      {"pp", 2, 2, 32, kPipeline},
                                      {"embedding", 2, 2, 32, kEmbedding}});
  // TP 4 inside a node: DP partners are the other half of the same node; dp left out = the rest.
  g = layout_groups(parse_parallelism("tp=4"), {1, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", 1, 4, 2, kTensor}, {"dp", 1, 2, 4, kData}});
  // PP 4 on 4 nodes: the embedding group is the first and the last stage only (2 of the 4 nodes).
  g = layout_groups(parse_parallelism("tp=8,pp=4"), {4, 8});
  CHECK(g == std::vector<LayoutGroup>{
                 {"tp", 1, 8, 4, kTensor}, {"pp", 4, 4, 8, kPipeline}, {"embedding", 2, 2, 8, kEmbedding}});
}

TEST_CASE("shapes: expert groups split the data-parallel ranks as Megatron-Core's expert grid does") {
  // 16 nodes x 8, TP 2, EP 8, PP 2, DP 32 (the rest). Dense rank = t + 2 d + 64 p; expert rank = t + 2 e +
  // 16 d' + 64 p: an expert group is ranks {t, t+2, ..., t+14} (two nodes, four ranks on each), an expert
  // data-parallel group {t + 2e + 16 d'} (four nodes, one on each).
  auto g = layout_groups(parse_parallelism("tp=2,ep=8,pp=2"), {16, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", 1, 2, 64, kTensor},
                                      {"dp", 8, 32, 4, kData},
                                      {"ep", 2, 8, 16, {Operation::alltoall}},
                                      {"edp", 4, 4, 32, kData},
                                      {"pp", 2, 2, 64, kPipeline},
                                      {"embedding", 2, 2, 64, kEmbedding}});
  // EP equal to DP inside a node: the expert groups are the data-parallel groups' ranks, no expert DP left.
  g = layout_groups(parse_parallelism("tp=2,ep=4"), {1, 8});
  CHECK(g == std::vector<LayoutGroup>{
                 {"tp", 1, 2, 4, kTensor}, {"dp", 1, 4, 2, kData}, {"ep", 1, 4, 2, {Operation::alltoall}}});
}

TEST_CASE("shapes: context groups sit between tensor and data groups, and data groups span both") {
  // 2 nodes x 8, TP 4, CP 2, DP 2: rank = t + 4 c + 8 d. A context group {t, t+4} stays in a node; the
  // data-parallel groups reduce over dp x cp = {t, t+4, t+8, t+12} (2 nodes x 2).
  auto g = layout_groups(parse_parallelism("tp=4,cp=2,dp=2"), {2, 8});
  CHECK(g == std::vector<LayoutGroup>{{"tp", 1, 4, 4, kTensor},
                                      {"cp", 1, 2, 8, {Operation::sendrecv, Operation::allgather}},
                                      {"dp", 2, 4, 4, kData}});
  // EP may divide dp x cp without dividing dp (Megatron-Core's expert grid has no cp).
  CHECK_NOTHROW(layout_groups(parse_parallelism("tp=4,cp=2,ep=4"), {2, 8}));
}

TEST_CASE("shapes: FSDP and HSDP layouts") {
  const std::vector<Operation> sharded = {Operation::allgather, Operation::reducescatter};
  CHECK(layout_groups(parse_parallelism("fsdp"), {4, 8}) ==
        std::vector<LayoutGroup>{{"fsdp", 4, 32, 1, sharded}});
  CHECK(layout_groups(parse_parallelism("hsdp=8"), {4, 8}) ==
        std::vector<LayoutGroup>{{"shard", 1, 8, 4, sharded}, {"replicate", 4, 4, 8, kEmbedding}});
}

TEST_CASE("shapes: layouts that do not fill the job or are uneven across nodes are refused") {
  CHECK_THROWS_WITH(layout_groups(parse_parallelism("tp=8,dp=2"), {4, 8}),
                    Catch::Contains("tp x cp x pp x dp = 16 must equal the job's 4 x 8 = 32 ranks"));
  CHECK_THROWS_WITH(layout_groups(parse_parallelism("tp=8,pp=3"), {4, 8}),
                    Catch::Contains("tp x cp x pp = 24 does not divide the job's 4 x 8 = 32 ranks"));
  // 2 nodes x 6: TP 4 puts ranks 4-7 on both nodes and 0-3 on one: groups of two shapes.
  CHECK_THROWS_AS(layout_groups(parse_parallelism("tp=4,dp=3"), {2, 6}), InputError);
  CHECK_THROWS_WITH(layout_groups(parse_parallelism("hsdp=5"), {1, 8}), Catch::Contains("does not divide"));
  for (const char* bad : {"tp=8,,dp=2", "tp=0", "tp", "xp=2", "tp=8;dp=2", "ep=-1"})
    CHECK_THROWS_WITH(parse_parallelism(bad), Catch::Contains("--parallelism: expected tp=N,cp=N,ep=N"));
}

TEST_CASE("shapes: expert parallelism must divide the data-parallel size") {
  CHECK_THROWS_WITH(layout_groups(parse_parallelism("tp=2,ep=3,pp=2"), {16, 8}),
                    Catch::Contains("--parallelism: ep=3 must divide the data-parallel size 32 (dp x cp"));
  CHECK_THROWS_WITH(layout_groups(parse_parallelism("tp=8,ep=4,dp=2"), {2, 8}),
                    Catch::Contains("ep=4 must divide the data-parallel size 2"));
}

TEST_CASE("shapes: HSDP and FSDP take no Megatron-Core size") {
  for (const char* bad : {"hsdp=8,cp=2", "cp=2,hsdp=8", "fsdp,cp=2", "fsdp,ep=2", "hsdp=4,tp=2"})
    CHECK_THROWS_WITH(parse_parallelism(bad), Catch::Contains("takes no other size"));
  CHECK_THROWS_WITH(parse_parallelism("fsdp,hsdp=8"), Catch::Contains("one of hsdp=SHARD and fsdp"));
}

TEST_CASE("shapes: what a cluster can measure with all groups at once") {
  CHECK_NOTHROW(check_shape({4, 4}, {4, 8}, "--shapes"));
  CHECK_NOTHROW(check_shape({3, 3}, {4, 8}, "--shapes"));  // the fourth node sits it out
  CHECK_THROWS_WITH(check_shape({8, 8}, {4, 8}, "--shapes"),
                    Catch::Contains("needs 8 nodes, the cluster has 4"));
  CHECK_THROWS_WITH(check_shape({1, 3}, {4, 8}, "--shapes"), Catch::Contains("must divide the 8 GPUs"));
  CHECK_THROWS_WITH(check_shape({1, 1}, {4, 8}, "--shapes"), Catch::Contains("one rank"));
}
