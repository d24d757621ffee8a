// RuleTable::find's tree walk (rule_table.hpp) against a plain scan of the input rules: random rule sets of
// 1, 15, 16, 17, 255, 256, 257 and 5,000 rules with random gaps between them, and touching rules of 63-65,
// 1,023-1,025 and 16,384-16,385 segments (a root of 64 keys full or one past, and the levels below it full or
// one past), asked for every segment's edges, the sizes either side, gaps, 0, the largest size and random
// sizes; then random overlapping rules, whose chains the scan must also predict.
#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <random>

#include "profiles/rule_table.hpp"

using namespace autotune::profiles;
using namespace autotune::nccl;

namespace {

constexpr uint64_t kTreeMaxBytes = std::numeric_limits<uint64_t>::max();

Rule tree_rule(Collective c, uint64_t lo, uint64_t hi, int channels) {
  Rule r;
  r.collective = c;
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algorithm = Algorithm::ring;
  r.protocol = Protocol::simple;
  r.channels = channels;
  return r;
}

// The rules covering (collective, bytes), in input order: what the chain must hold (up to kMaxChain).
std::vector<uint32_t> scan_covering(const std::vector<Rule>& rules, Collective c, uint64_t bytes) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < rules.size(); ++i)
    if (rules[i].collective == c && rules[i].min_bytes <= bytes && bytes <= rules[i].max_bytes)
      out.push_back(static_cast<uint32_t>(i));
  return out;
}

void check_against_scan(const RuleTable& t, const std::vector<Rule>& rules, Collective c, uint64_t bytes) {
  const std::vector<uint32_t> want = scan_covering(rules, c, bytes);
  std::vector<uint32_t> got;
  for (const CompiledRule* r = t.find(static_cast<int>(c), bytes); r; r = t.next(r)) got.push_back(r->source);
  const size_t kept = std::min(want.size(), RuleTable::kMaxChain);
  CHECK(got == std::vector<uint32_t>(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(kept)));
}

// `count` disjoint AllReduce ranges, sometimes touching, sometimes with gaps from 1 byte to 2^50, sometimes
// starting at 0, the last sometimes reaching or starting at the largest size; in shuffled input order.
std::vector<Rule> disjoint_rules(size_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> coin(0, 3);
  auto up_to = [&](uint64_t max) { return std::uniform_int_distribution<uint64_t>(1, max)(rng); };
  std::vector<Rule> rules;
  uint64_t at = coin(rng) == 0 ? 0 : up_to(1 << 20);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t lo = at, hi = lo + (coin(rng) == 0 ? 0 : up_to(coin(rng) == 0 ? 1ull << 50 : 4096));
    rules.push_back(tree_rule(Collective::allreduce, lo, hi, static_cast<int>(i % 64)));
    const int gap = coin(rng);
    at = hi + 1 + (gap == 0 ? 0 : gap == 1 ? up_to(1ull << 50) : up_to(100));
  }
  const int end = coin(rng);
  if (end == 0) rules.back().max_bytes = kTreeMaxBytes;
  if (end == 1) rules.back().min_bytes = rules.back().max_bytes = kTreeMaxBytes;
  std::shuffle(rules.begin(), rules.end(), rng);
  // A few rules of another collective, so that trees share the block array.
  for (uint64_t i = 0; i < 20; ++i) rules.push_back(tree_rule(Collective::allgather, 50 * i, 50 * i + 9, 1));
  return rules;
}

void check_sizes(const RuleTable& t, const std::vector<Rule>& rules, Collective c, std::mt19937_64& rng) {
  std::vector<uint64_t> sizes = {0, 1, kTreeMaxBytes, kTreeMaxBytes - 1};
  for (const Rule& r : rules) {
    if (r.collective != c) continue;
    for (uint64_t edge : {r.min_bytes, r.max_bytes}) {
      sizes.push_back(edge);
      sizes.push_back(edge - 1);  // wraps at 0: the largest size, also wanted
      sizes.push_back(edge + 1);
    }
    sizes.push_back(r.min_bytes + (r.max_bytes - r.min_bytes) / 2);
  }
  for (int i = 0; i < 2000; ++i) {
    sizes.push_back(rng());
    sizes.push_back(rng() >> (rng() % 64));
  }
  for (uint64_t bytes : sizes) {
    INFO("bytes " << bytes);
    check_against_scan(t, rules, c, bytes);
  }
}

}  // namespace

TEST_CASE("rule table tree: find agrees with a scan at every level count", "[rule_table]") {
  std::mt19937_64 rng(2027);
  for (size_t count : {1u, 15u, 16u, 17u, 255u, 256u, 257u, 5000u}) {
    for (int trial = 0; trial < 4; ++trial) {
      INFO(count << " segments, trial " << trial);
      const std::vector<Rule> rules = disjoint_rules(count, rng);
      const RuleTable t = RuleTable::compile(rules, CommShape::of(2, 16));
      REQUIRE(t.size() == rules.size());
      check_sizes(t, rules, Collective::allreduce, rng);
      check_sizes(t, rules, Collective::allgather, rng);
      CHECK_FALSE(t.find(static_cast<int>(Collective::broadcast), 0));
    }
  }
}

TEST_CASE("rule table tree: overlapping random rules chain as a scan orders them", "[rule_table]") {
  std::mt19937_64 rng(527);
  for (size_t count : {1u, 17u, 300u, 2000u}) {
    INFO(count << " rules");
    std::vector<Rule> rules;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t lo = rng() % (count * 64), len = rng() % 4 == 0 ? rng() % (count * 64) : rng() % 200;
      rules.push_back(tree_rule(Collective::allreduce, lo, rng() % 50 == 0 ? kTreeMaxBytes : lo + len,
                                static_cast<int>(i % 64)));
    }
    const RuleTable t = RuleTable::compile(rules, CommShape::of(2, 16));
    check_sizes(t, rules, Collective::allreduce, rng);
  }
}

TEST_CASE("rule table tree: segment counts at the root's and the levels' edges", "[rule_table]") {
  // Touching ranges from 0, the last reaching the largest size: exactly `count` segments, no gap, so the
  // root of 64 keys is full, one past full, and the levels below it full or one past.
  std::mt19937_64 rng(2028);
  for (size_t count : {63u, 64u, 65u, 1023u, 1024u, 1025u, 16384u, 16385u}) {
    INFO(count << " touching segments");
    std::vector<Rule> rules;
    for (uint64_t i = 0; i < count; ++i)
      rules.push_back(tree_rule(Collective::allreduce, 100 * i, 100 * i + 99, static_cast<int>(i % 64)));
    rules.back().max_bytes = kTreeMaxBytes;
    const RuleTable t = RuleTable::compile(rules, CommShape::of(2, 16));
    REQUIRE(t.size() == rules.size());
    check_sizes(t, rules, Collective::allreduce, rng);
  }
}
