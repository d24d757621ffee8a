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
  RuleTable t = RuleTable::compile(rules, CommShape::of(2, 16));
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

TEST_CASE("rule table: a rule for nodes x ranks per node applies to even communicators of that shape only",
          "[rule_table]") {
  Rule dp = at_scale(rule(Collective::allreduce, 0, 1023, Algorithm::tree, Protocol::ll), CountRange{4, 4},
                     CountRange{4, 4});
  dp.ranks_per_node = CountRange{1, 1};
  Rule tp = rule(Collective::allreduce, 0, 1023, Algorithm::ring, Protocol::ll);
  tp.ranks_per_node = CountRange{8, 8};
  CHECK(RuleTable::compile({dp, tp}, CommShape::of(4, 4)).size() == 1);
  CHECK(RuleTable::compile({dp, tp}, CommShape::of(4, 4)).find(kAllReduce, 5)->algorithm ==
        static_cast<int8_t>(Algorithm::tree));
  CHECK(RuleTable::compile({dp, tp}, CommShape::of(2, 16)).find(kAllReduce, 5)->algorithm ==
        static_cast<int8_t>(Algorithm::ring));
  // 2 nodes holding 4 and 12 ranks: the 16 ranks are there, the 8 per node are not.
  CHECK(RuleTable::compile({dp, tp}, CommShape{2, 16, 4, 12}).size() == 0);
  // Per-node counts unknown (tuner ABIs before v5 on an uneven job): rules that name them never apply.
  CHECK(RuleTable::compile({dp, tp}, CommShape{2, 15, 0, 0}).size() == 0);
}

TEST_CASE("rule table: out-of-range collective ids and the empty table", "[rule_table]") {
  RuleTable empty;
  CHECK(empty.size() == 0);
  CHECK(empty.find(kAllReduce, 100) == nullptr);
  RuleTable t = RuleTable::compile(
      {rule(Collective::allreduce, 0, UINT64_MAX, Algorithm::ring, Protocol::simple)}, CommShape::of(1, 8));
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
  RuleTable one_node = RuleTable::compile(rules, CommShape::of(1, 8));
  CHECK(one_node.size() == 2);
  REQUIRE(one_node.find(kAllReduce, 10));
  CHECK(one_node.find(kAllReduce, 10)->algorithm == static_cast<int8_t>(Algorithm::tree));

  RuleTable four_nodes = RuleTable::compile(rules, CommShape::of(4, 32));
  CHECK(four_nodes.size() == 2);
  REQUIRE(four_nodes.find(kAllReduce, 10));
  CHECK(four_nodes.find(kAllReduce, 10)->algorithm == static_cast<int8_t>(Algorithm::ring));

  // 4 nodes but 128 ranks: outside the ranks bound, only the scale-free rule applies.
  RuleTable many_ranks = RuleTable::compile(rules, CommShape::of(4, 128));
  CHECK(many_ranks.size() == 1);
  CHECK(many_ranks.find(kAllReduce, 10) == nullptr);
  REQUIRE(many_ranks.find(kAllReduce, 2047));
  CHECK(many_ranks.find(kAllReduce, 2047)->algorithm == static_cast<int8_t>(Algorithm::nvls));
}

// The bytes each chain covers and the algorithms along it, as "lo-hi:a,b;...": what the table would make of
// every size, read back through find() and next() only.
std::string chains(const RuleTable& t, const std::vector<uint64_t>& probes) {
  std::string out;
  for (uint64_t b : probes) {
    out += std::to_string(b) + ":";
    for (const CompiledRule* r = t.find(kAllReduce, b); r; r = t.next(r))
      out += std::to_string(r->source) + (t.next(r) ? "," : "");
    out += ";";
  }
  return out;
}

TEST_CASE("rule table: overlapping rules chain in input order, as NCCL's example plugin reads its lines",
          "[rule_table]") {
  std::vector<Rule> rules = {
      rule(Collective::allreduce, 100, 300, Algorithm::ring, Protocol::ll),     // 0
      rule(Collective::allreduce, 0, 200, Algorithm::tree, Protocol::ll),       // 1
      rule(Collective::allreduce, 50, 150, Algorithm::tree, Protocol::simple),  // 2
      rule(Collective::allreduce, 0, 10, Algorithm::ring, Protocol::simple),    // 3: after 1, same start
  };
  RuleTable t = RuleTable::compile(rules, CommShape::of(1, 8));
  CHECK(t.size() == 4);  // every rule is reached somewhere (behind another one where NCCL rules that out)
  CHECK(chains(t, {0, 10, 11, 49, 50, 99, 100, 150, 151, 200, 201, 300, 301}) ==
        "0:1,3;10:1,3;11:1;49:1;50:1,2;99:1,2;100:0,1,2;150:0,1,2;151:0,1;200:0,1;201:0;300:0;301:;");
  CHECK(t.find(kAllReduce, 0)->algorithm == static_cast<int8_t>(Algorithm::tree));
  CHECK(t.find(kAllReduce, 120)->algorithm == static_cast<int8_t>(Algorithm::ring));
  CHECK(t.find(kAllReduce, 120)->min_bytes == 100);
  CHECK(t.find(kAllReduce, 120)->max_bytes == 150);
  CHECK(t.dropped() == 0);
}

TEST_CASE("rule table: per-call conditions pick the first rule that holds for numPipeOps and regBuff",
          "[rule_table]") {
  Rule registered = rule(Collective::allreduce, 0, 1000, Algorithm::tree, Protocol::ll);
  registered.reg_buff = true;
  Rule piped = rule(Collective::allreduce, 0, 1000, Algorithm::ring, Protocol::ll);
  piped.pipe_ops = CountRange{2, 4};
  Rule plain = rule(Collective::allreduce, 0, 1000, Algorithm::ring, Protocol::simple);
  plain.chunk_bytes = 1 << 20;
  RuleTable t = RuleTable::compile({registered, piped, plain}, CommShape::of(1, 8));
  auto algo_of = [&](int pipe_ops, int reg_buff) {
    const CompiledRule* r = t.match(kAllReduce, 500, pipe_ops, reg_buff);
    return r ? static_cast<int>(r->source) : -1;
  };
  CHECK(algo_of(1, 1) == 0);
  CHECK(algo_of(3, 1) == 0);
  CHECK(algo_of(3, 0) == 1);
  CHECK(algo_of(5, 0) == 2);
  CHECK(algo_of(1, 0) == 2);
  CHECK(algo_of(2, kRegBuffUnknown) == 1);  // v2/v3: a rule that needs regBuff never applies
  CHECK(algo_of(1, kRegBuffUnknown) == 2);
  CHECK(t.match(kAllReduce, 1001, 1, 0) == nullptr);
  const CompiledRule* r = t.find(kAllReduce, 0);
  REQUIRE(r);
  CHECK_FALSE(r->any_call);
  REQUIRE(t.next(t.next(r)));
  CHECK(t.next(t.next(r))->any_call);
  CHECK(t.next(t.next(r))->chunk_bytes == (1u << 20));
}

TEST_CASE("rule table: a pile of overlapping lines keeps the first kMaxChain per segment", "[rule_table]") {
  std::vector<Rule> rules;
  for (int i = 0; i < 40; ++i)
    rules.push_back(rule(Collective::allreduce, 0, 100, Algorithm::ring, Protocol::ll, i));
  RuleTable t = RuleTable::compile(rules, CommShape::of(1, 8));
  size_t length = 0;
  for (const CompiledRule* r = t.find(kAllReduce, 50); r; r = t.next(r)) CHECK(r->channels == int(length++));
  CHECK(length == RuleTable::kMaxChain);
  CHECK(t.dropped() == 40 - RuleTable::kMaxChain);
  CHECK(t.size() == RuleTable::kMaxChain);
}

TEST_CASE("rule table: thousands of segments in two collectives find what a scan finds, at every edge",
          "[rule_table]") {
  // Gaps between all 4,100 AllReduce segments; AllGather's last segment reaches the largest size.
  std::vector<Rule> rules;
  for (uint64_t i = 0; i < 4100; ++i)
    rules.push_back(rule(Collective::allreduce, 100 * i + 10, 100 * i + 59, Algorithm::ring, Protocol::ll));
  for (uint64_t i = 0; i < 20; ++i)
    rules.push_back(rule(Collective::allgather, 1000 * i, 1000 * i + 999, Algorithm::ring, Protocol::simple));
  rules.push_back(rule(Collective::allgather, 1u << 30, std::numeric_limits<uint64_t>::max(), Algorithm::ring,
                       Protocol::ll128));
  RuleTable t = RuleTable::compile(rules, CommShape::of(2, 16));
  for (uint64_t i = 0; i < 4100; ++i) {
    INFO("AllReduce segment " << i);
    for (uint64_t bytes : {100 * i + 10, 100 * i + 30, 100 * i + 59}) {
      const CompiledRule* r = t.find(kAllReduce, bytes);
      REQUIRE(r);
      CHECK(r->source == i);
    }
    CHECK_FALSE(t.find(kAllReduce, 100 * i + 9));
    CHECK_FALSE(t.find(kAllReduce, 100 * i + 60));
  }
  CHECK_FALSE(t.find(kAllReduce, std::numeric_limits<uint64_t>::max()));
  for (uint64_t i = 0; i < 20; ++i) {
    const CompiledRule* r = t.find(kAllGather, 1000 * i + 999);
    REQUIRE(r);
    CHECK(r->source == 4100 + i);
  }
  CHECK_FALSE(t.find(kAllGather, 20000));
  for (uint64_t bytes : {uint64_t{1} << 30, std::numeric_limits<uint64_t>::max()}) {
    const CompiledRule* r = t.find(kAllGather, bytes);
    REQUIRE(r);
    CHECK(r->source == 4120);
  }
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
  CHECK(scales[0] == NamedScale{{1, 1}, {8, 8}, {}});
  CHECK(scales[1] == NamedScale{{4, 4}, {32, 32}, {}});
  CHECK(scales[2] == NamedScale{{16, 32}, CountRange{}, {}});

  auto nearest_to = [&](int nodes, int ranks) {
    return nearest_named_scale(rules, CommShape::of(nodes, ranks), 8);
  };
  auto shape = [](const std::optional<CommShape>& s) {
    return s ? std::to_string(s->nodes) + "x" + std::to_string(s->ranks / s->nodes) : std::string("none");
  };
  CHECK(shape(nearest_to(4, 32)) == "none");  // calibrated itself
  CHECK(shape(nearest_to(20, 160)) == "none");
  CHECK(shape(nearest_to(2, 16)) == "1x8");  // equally far in nodes from 1 and 4: smaller
  CHECK(shape(nearest_to(3, 24)) == "4x8");  // log2(3) is nearer 4 than 1
  CHECK(shape(nearest_to(64, 512)) == "32x8");
  // Never across kinds of communicator: part of a node and one rank per node borrow only their own kind.
  CHECK(shape(nearest_to(4, 16)) == "16x4");
  CHECK(shape(nearest_to(4, 4)) == "16x1");
  CHECK(shape(nearest_to(2, 2)) == "16x1");
  CHECK(shape(nearest_to(1, 4)) == "16x4");
  // Uneven, or per-node counts unknown: no kind, so nothing borrowed.
  CHECK(shape(nearest_named_scale(rules, CommShape{2, 12, 4, 8}, 8)) == "none");
  CHECK(shape(nearest_named_scale(rules, CommShape{2, 16, 0, 0}, 8)) == "none");
  CHECK(shape(nearest_named_scale({rule(Collective::allreduce, 0, 1, Algorithm::ring, Protocol::ll)},
                                  CommShape::of(2, 16), 8)) == "none");

  // The plugin's nearest policy: the rules of the nearest named scale (tuner_core.cpp).
  const auto borrowed = nearest_named_scale(rules, CommShape::of(3, 24), 8);
  RuleTable nearest = RuleTable::compile(rules, *borrowed);
  CHECK(nearest.size() == 2);
  REQUIRE(nearest.find(kAllReduce, 5));
  CHECK(nearest.find(kAllReduce, 5)->algorithm == static_cast<int8_t>(Algorithm::ring));
  CHECK(nearest.find(kAllGather, 5));
  RuleTable nccl = RuleTable::compile(rules, CommShape::of(3, 24));  // policy nccl: only the any-scale rules
  CHECK(nccl.size() == 1);
  CHECK(nccl.find(kAllReduce, 5) == nullptr);
}
