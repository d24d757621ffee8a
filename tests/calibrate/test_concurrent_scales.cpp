// Which scales run side by side: every scale placed once, the groups of a round on disjoint nodes within the
// allocation, and the time the whole allocation is held (the longest scale of each round, in turn).
#include <catch2/catch.hpp>

#include "calibrate/concurrent_scales.hpp"
#include "calibrate/shapes.hpp"

using namespace autotune;
using namespace autotune::calibrate;

namespace {

std::vector<ScalePlan> default_plan(int nodes, double seconds_each) {
  std::vector<ScalePlan> out;
  for (const auto& s : default_shapes({nodes, 8})) out.push_back({s, 4, 100, seconds_each});
  return out;
}

void check_disjoint_and_complete(const std::vector<ConcurrentRound>& rounds,
                                 const std::vector<ScalePlan>& plan, int nodes) {
  size_t placed = 0;
  for (const auto& r : rounds) {
    std::vector<int> owner(static_cast<size_t>(nodes), -1);
    for (size_t g = 0; g < r.groups.size(); ++g) {
      const auto& group = r.groups[g];
      REQUIRE(group.first_node >= 0);
      REQUIRE(group.first_node + group.scale.nodes <= nodes);
      for (int n = group.first_node; n < group.first_node + group.scale.nodes; ++n) {
        CHECK(owner[static_cast<size_t>(n)] == -1);  // no node in two groups of one round
        owner[static_cast<size_t>(n)] = static_cast<int>(g);
      }
      ++placed;
    }
  }
  CHECK(placed == plan.size());
}

}  // namespace

TEST_CASE("concurrent scales: 1,024 nodes in 4 rounds on disjoint nodes, the allocation held 4 scales long") {
  const auto plan = default_plan(1024, 1000.0);
  REQUIRE(plan.size() == 21);
  const auto rounds = schedule_concurrent(plan, 1024);
  check_disjoint_and_complete(rounds, plan, 1024);
  REQUIRE(rounds.size() == 4);
  // The two whole-allocation shapes alone, then both 512-node shapes together, then everything smaller.
  CHECK(rounds[0].groups.size() == 1);
  CHECK(rounds[1].groups.size() == 1);
  CHECK(rounds[2].groups.size() == 2);
  CHECK(rounds[3].groups.size() == 17);
  CHECK(node_range_text(rounds[2].groups[1]) == "nodes 512-1023");
  const auto cost = schedule_cost(plan, rounds, 1024);
  CHECK(cost.sequential_s == Approx(21000.0));
  CHECK(cost.concurrent_s == Approx(4000.0));
  CHECK(cost.sequential_node_hours() == Approx(1024 * 21000.0 / 3600));
}

TEST_CASE(
    "concurrent scales: a round lasts as long as its longest scale, nothing larger than the allocation") {
  std::vector<ScalePlan> plan = {
      {{2, 16}, 4, 100, 50.0}, {{1, 8}, 1, 25, 10.0}, {{1, 8}, 1, 25, 10.0}, {{4, 32}, 4, 100, 70.0}};
  plan[2].scale = {1, 2};
  const auto rounds = schedule_concurrent(plan, 2);
  check_disjoint_and_complete(rounds, {plan[0], plan[1], plan[2]}, 2);
  REQUIRE(rounds.size() == 2);  // 2x8 alone, then 1x8 beside 1x2
  CHECK(rounds[0].estimated_s == 50.0);
  CHECK(rounds[1].estimated_s == 10.0);
  CHECK(node_range_text(rounds[1].groups[1]) == "node 1");
  // One node: nothing can run beside anything.
  CHECK(schedule_concurrent({plan[1], plan[2]}, 1).size() == 2);
}

TEST_CASE("concurrent scales: a group's node range reads back as it was written, and nothing else reads") {
  const ScaleGroup wide{{256, 2048}, 512};
  const auto span = search::parse_node_range(node_range(wide));
  REQUIRE(span);
  CHECK(span->first == 512);
  CHECK(span->count == 256);
  const auto one = search::parse_node_range(node_range(ScaleGroup{{1, 8}, 3}));
  REQUIRE(one);
  CHECK((one->first == 3 && one->count == 1));
  for (const char* bad : {"", "-", "3-", "-3", "7-3", "a-b", "1-2-3", " 1-2", "1234567890"})
    CHECK_FALSE(search::parse_node_range(bad));
}
