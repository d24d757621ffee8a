// Communicator::steer's rule lookup (steer_by_rules, tuner_core.hpp), which decides a segment holding one
// unconditioned rule from its 8-byte head, against the full walk of the chain it stands for: random tables of
// conditioned and unconditioned, disjoint and overlapping rules, random cost tables with some entries
// negative or NaN (ruled out by NCCL), random calls; the cost table and channel count must come out the same.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "plugins/tuner_core.hpp"

using namespace autotune::profiles;
using namespace autotune::nccl;
using autotune::plugin::apply_rule;
using autotune::plugin::steer_by_rules;

namespace {

using Costs = float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];

// What steer() did before the segment heads: walk the chain, first rule that matches and whose entry is
// usable wins.
void steer_by_chain(const RuleTable& t, int c, uint64_t bytes, int pipe_ops, int reg_buff, Costs& costs,
                    int* channels) {
  for (const CompiledRule* r = t.find(c, bytes); r != nullptr; r = t.next(r))
    if (r->matches(pipe_ops, reg_buff) && apply_rule(*r, costs, NCCL_NUM_ALGORITHMS, channels)) return;
}

// `count` rules over two collectives in [0, 1 MiB) and sometimes up to the largest size; about a third with
// a numPipeOps or regBuff condition; `overlapping` lets ranges cross, otherwise they are disjoint.
std::vector<Rule> fast_path_rules(size_t count, bool overlapping, std::mt19937_64& rng) {
  auto pick = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
  std::vector<Rule> rules;
  uint64_t at = pick(0, 64);
  for (size_t i = 0; i < count; ++i) {
    Rule r;
    r.collective = pick(0, 3) == 0 ? Collective::allgather : Collective::allreduce;
    r.min_bytes = overlapping ? pick(0, 1 << 20) : at;
    r.max_bytes = r.min_bytes + pick(0, 4096);
    if (pick(0, 50) == 0) r.max_bytes = UINT64_MAX;
    at = r.max_bytes == UINT64_MAX ? at : r.max_bytes + 1 + pick(0, 2) * pick(0, 512);
    r.algorithm = kAllAlgorithms[pick(0, kNumAlgorithms - 1)];
    r.protocol = kAllProtocols[pick(0, kNumProtocols - 1)];
    r.channels = static_cast<int>(pick(0, 3)) * 8;
    const uint64_t condition = pick(0, 5);
    if (condition == 0) r.pipe_ops = CountRange{1, static_cast<int>(pick(1, 3))};
    if (condition == 1) r.reg_buff = pick(0, 1) == 1;
    rules.push_back(r);
    if (!overlapping && r.max_bytes == UINT64_MAX) break;
  }
  return rules;
}

// NCCL's table with some entries ruled out: negative, or NaN.
void random_costs(Costs& costs, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 5);
  for (auto& row : costs)
    for (float& cell : row) {
      const int k = kind(rng);
      cell = k == 0 ? -1.0f : k == 1 ? std::nanf("") : static_cast<float>(k) * 10.0f;
    }
}

uint64_t random_size(const std::vector<Rule>& rules, std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> which(0, rules.size() - 1);
  const Rule& r = rules[which(rng)];
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
    case 0:
      return r.min_bytes;
    case 1:
      return r.max_bytes;
    case 2:
      return r.min_bytes - 1;  // below it: a gap, another rule, or 2^64 - 1
    case 3:
      return r.max_bytes + 1;
    default:
      return std::uniform_int_distribution<uint64_t>(0, 2 << 20)(rng);
  }
}

}  // namespace

TEST_CASE("steer's segment-head fast path decides as the full chain walk") {
  std::mt19937_64 rng(20261203);
  size_t steered = 0, calls = 0;
  for (int round = 0; round < 200; ++round) {
    const bool overlapping = round % 2 == 1;
    const std::vector<Rule> rules =
        fast_path_rules(1 + static_cast<size_t>(round % 50) * 7, overlapping, rng);
    const RuleTable table = RuleTable::compile(rules, CommShape::of(1, 8));
    for (int k = 0; k < 500; ++k, ++calls) {
      Costs given, want, got;
      random_costs(given, rng);
      std::memcpy(want, given, sizeof given);
      std::memcpy(got, given, sizeof given);
      const int c = static_cast<int>(std::uniform_int_distribution<int>(-1, kNumCollectives)(rng));
      const uint64_t bytes = random_size(rules, rng);
      const int pipe_ops = std::uniform_int_distribution<int>(1, 4)(rng);
      const int reg_buff = std::uniform_int_distribution<int>(-1, 1)(rng);
      int want_channels = 0, got_channels = 0;
      steer_by_chain(table, c, bytes, pipe_ops, reg_buff, want, &want_channels);
      steer_by_rules(table, c, bytes, pipe_ops, reg_buff, got, NCCL_NUM_ALGORITHMS, &got_channels);
      REQUIRE(std::memcmp(want, got, sizeof want) == 0);  // bytewise: NaN entries stay the same NaN
      REQUIRE(want_channels == got_channels);
      steered += std::memcmp(want, given, sizeof want) != 0;
    }
  }
  // The comparison means something only if the rules steer a fair share of the calls.
  CHECK(steered > calls / 20);
}
