#include <catch2/catch.hpp>
#include <limits>

#include "profiles/rule_table.hpp"

using namespace autotune::profiles;
using namespace autotune::nccl;

namespace {

Rule rule(Collective c, uint64_t lo, uint64_t hi, Algorithm a, Protocol p, int channels = 0) {
  Rule r;
  r.collective = c;
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algorithm = a;
  r.protocol = p;
  r.channels = channels;
  return r;
}

Rule at_scale(Rule r, std::optional<CountRange> nodes, std::optional<CountRange> ranks) {
  r.nodes = nodes;
  r.ranks = ranks;
  return r;
}

constexpr int kAllReduce = static_cast<int>(Collective::allreduce);
constexpr int kAllGather = static_cast<int>(Collective::allgather);

}  // namespace

TEST_CASE("rule table: lookups at the edges of each range", "[rule_table]") {
  std::vector<Rule> rules = {
      rule(Collective::allreduce, 1024, 65535, Algorithm::tree, Protocol::ll, 4),
      rule(Collective::allreduce, 0, 1023, Algorithm::ring, Protocol::ll),
      rule(Collective::allreduce, 1 << 20, (1 << 30) - 1, Algorithm::ring, Protocol::simple, 16),
      rule(Collective::allgather, 8, 8, Algorithm::pat, Protocol::simple),
  };
  RuleTable t = RuleTable::compile(rules, 2, 16);
  REQUIRE(t.size() == 4);

  const CompiledRule* r = t.find(kAllReduce, 0);
  REQUIRE(r);
  CHECK(r->algorithm == static_cast<int8_t>(Algorithm::ring));
  CHECK(r->protocol == static_cast<int8_t>(Protocol::ll));
  CHECK(t.find(kAllReduce, 1023) == r);
  r = t.find(kAllReduce, 1024);
  REQUIRE(r);
  CHECK(r->algorithm == static_cast<int8_t>(Algorithm::tree));
  CHECK(r->channels == 4);
  CHECK(t.find(kAllReduce, 65535) == r);
  CHECK(t.find(kAllReduce, 65536) == nullptr);  // the gap between rules: NCCL decides
  CHECK(t.find(kAllReduce, (1 << 20) - 1) == nullptr);
  REQUIRE(t.find(kAllReduce, 1 << 20));
  CHECK(t.find(kAllReduce, 1 << 20)->channels == 16);
  CHECK(t.find(kAllReduce, (1u << 30) - 1));
  CHECK(t.find(kAllReduce, 1u << 30) == nullptr);
  CHECK(t.find(kAllReduce, std::numeric_limits<uint64_t>::max()) == nullptr);

  CHECK(t.find(kAllGather, 7) == nullptr);
  REQUIRE(t.find(kAllGather, 8));
  CHECK(t.find(kAllGather, 8)->algorithm == static_cast<int8_t>(Algorithm::pat));
  CHECK(t.find(kAllGather, 9) == nullptr);
  CHECK(t.find(static_cast<int>(Collective::broadcast), 8) == nullptr);
}

TEST_CASE("rule table: out-of-range collective ids and the empty table", "[rule_table]") {
  RuleTable empty;
  CHECK(empty.size() == 0);
  CHECK(empty.find(kAllReduce, 100) == nullptr);
  RuleTable t = RuleTable::compile(
      {rule(Collective::allreduce, 0, UINT64_MAX, Algorithm::ring, Protocol::simple)}, 1, 8);
  CHECK(t.find(kAllReduce, UINT64_MAX));
  CHECK(t.find(-1, 100) == nullptr);
  CHECK(t.find(5, 100) == nullptr);  // SendRecv and beyond never have rules
  CHECK(t.find(1000, 100) == nullptr);
}

TEST_CASE("rule table: keeps only the rules for the communicator's scale", "[rule_table]") {
  std::vector<Rule> rules = {
      at_scale(rule(Collective::allreduce, 0, 1023, Algorithm::tree, Protocol::ll), CountRange{1, 1}, {}),
      at_scale(rule(Collective::allreduce, 0, 1023, Algorithm::ring, Protocol::ll), CountRange{2, 8},
               CountRange{16, 64}),
      at_scale(rule(Collective::allreduce, 1024, 2047, Algorithm::nvls, Protocol::simple), {}, {}),
  };
  RuleTable one_node = RuleTable::compile(rules, 1, 8);
  CHECK(one_node.size() == 2);
  REQUIRE(one_node.find(kAllReduce, 10));
  CHECK(one_node.find(kAllReduce, 10)->algorithm == static_cast<int8_t>(Algorithm::tree));

  RuleTable four_nodes = RuleTable::compile(rules, 4, 32);
  CHECK(four_nodes.size() == 2);
  REQUIRE(four_nodes.find(kAllReduce, 10));
  CHECK(four_nodes.find(kAllReduce, 10)->algorithm == static_cast<int8_t>(Algorithm::ring));

  // 4 nodes but 128 ranks: outside the ranks bound, only the scale-free rule applies.
  RuleTable many_ranks = RuleTable::compile(rules, 4, 128);
  CHECK(many_ranks.size() == 1);
  CHECK(many_ranks.find(kAllReduce, 10) == nullptr);
  REQUIRE(many_ranks.find(kAllReduce, 2047));
  CHECK(many_ranks.find(kAllReduce, 2047)->algorithm == static_cast<int8_t>(Algorithm::nvls));
}

TEST_CASE("rule table: overlapping rules resolve to the lower min_bytes, deterministically", "[rule_table]") {
  std::vector<Rule> rules = {
      rule(Collective::allreduce, 100, 300, Algorithm::ring, Protocol::ll),
      rule(Collective::allreduce, 0, 200, Algorithm::tree, Protocol::ll),
      rule(Collective::allreduce, 50, 150, Algorithm::tree, Protocol::simple),  // wholly shadowed
      rule(Collective::allreduce, 0, 10, Algorithm::ring, Protocol::simple),    // same start, later in input
  };
  RuleTable t = RuleTable::compile(rules, 1, 8);
  CHECK(t.size() == 2);
  CHECK(t.find(kAllReduce, 0)->algorithm == static_cast<int8_t>(Algorithm::tree));
  CHECK(t.find(kAllReduce, 200)->algorithm == static_cast<int8_t>(Algorithm::tree));
  CHECK(t.find(kAllReduce, 201)->algorithm == static_cast<int8_t>(Algorithm::ring));
  CHECK(t.find(kAllReduce, 300)->algorithm == static_cast<int8_t>(Algorithm::ring));
  CHECK(t.find(kAllReduce, 301) == nullptr);
}

TEST_CASE("rule table: named scales and the nearest one", "[rule_table]") {
  std::vector<Rule> rules = {
      at_scale(rule(Collective::allreduce, 0, 1023, Algorithm::tree, Protocol::ll), CountRange{1, 1},
               CountRange{8, 8}),
      at_scale(rule(Collective::allreduce, 1024, 2047, Algorithm::tree, Protocol::ll), CountRange{1, 1},
               CountRange{8, 8}),
      at_scale(rule(Collective::allreduce, 0, 1023, Algorithm::ring, Protocol::ll), CountRange{4, 4},
               CountRange{32, 32}),
      at_scale(rule(Collective::allreduce, 0, 1023, Algorithm::ring, Protocol::simple), CountRange{16, 32},
               {}),
      rule(Collective::allgather, 0, 1023, Algorithm::ring, Protocol::ll),  // any scale: names none
  };
  auto scales = named_scales(rules);
  REQUIRE(scales.size() == 3);
  CHECK(scales[0] == NamedScale{{1, 1}, {8, 8}});
  CHECK(scales[1] == NamedScale{{4, 4}, {32, 32}});
  CHECK(scales[2] == NamedScale{{16, 32}, CountRange{}});

  CHECK_FALSE(nearest_named_scale(rules, {4, 32}));  // calibrated itself
  CHECK_FALSE(nearest_named_scale(rules, {20, 160}));
  CHECK(nearest_named_scale(rules, {2, 16}) == Scale{1, 8});   // equally far in nodes from 1 and 4: smaller
  CHECK(nearest_named_scale(rules, {3, 24}) == Scale{4, 32});  // log2(3) is nearer 4 than 1
  CHECK(nearest_named_scale(rules, {64, 512}) == Scale{32, 512});
  CHECK(nearest_named_scale(rules, {4, 16}) == Scale{4, 32});  // right nodes, ranks differ
  CHECK_FALSE(
      nearest_named_scale({rule(Collective::allreduce, 0, 1, Algorithm::ring, Protocol::ll)}, {2, 16}));

  // The plugin's nearest policy: the rules of the nearest named scale (tuner_core.cpp).
  const auto borrowed = nearest_named_scale(rules, {3, 24});
  RuleTable nearest = RuleTable::compile(rules, borrowed->nodes, borrowed->ranks);
  CHECK(nearest.size() == 2);
  REQUIRE(nearest.find(kAllReduce, 5));
  CHECK(nearest.find(kAllReduce, 5)->algorithm == static_cast<int8_t>(Algorithm::ring));
  CHECK(nearest.find(kAllGather, 5));
  RuleTable nccl = RuleTable::compile(rules, 3, 24);  // policy nccl: only the any-scale rules
  CHECK(nccl.size() == 1);
  CHECK(nccl.find(kAllReduce, 5) == nullptr);
}
