// The groups of a communicator shape in a job: which ranks form which group, every rank of a group agreeing
// on its members, and the second pass that pairs other nodes.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "common/input_error.hpp"
#include "runners/group_layout.hpp"

using namespace autotune::runners;

TEST_CASE("group layout: a data-parallel shape takes one rank per node, a group per local rank") {
  GroupLayout dp({4, 4}, 4, 8);  // 4 nodes x 1 on a 4 x 8 job
  CHECK(dp.groups() == 8);
  for (int node = 0; node < 4; ++node)
    for (int local = 0; local < 8; ++local) {
      auto p = dp.place(node, local);
      CHECK(p.group == local);
      CHECK(p.member == node);
    }
  CHECK(dp.nodes_of(3) == std::vector<int>{0, 1, 2, 3});
  CHECK(dp.local_ranks_of(3) == std::vector<int>{3});
}

TEST_CASE("group layout: every rank is in exactly one group, members 0..size-1 each") {
  for (auto [shape, nodes, gpus] : std::vector<std::tuple<Scale, int, int>>{
           {{1, 8}, 4, 8}, {{2, 4}, 4, 8}, {{1, 2}, 2, 8}, {{4, 32}, 4, 8}, {{3, 3}, 4, 8}}) {
    GroupLayout l(shape, nodes, gpus);
    std::map<int, std::set<int>> members;
    int placed = 0;
    for (int n = 0; n < nodes; ++n)
      for (int g = 0; g < gpus; ++g) {
        auto p = l.place(n, g);
        if (p.group < 0) continue;
        ++placed;
        CHECK(members[p.group].insert(p.member).second);
      }
    INFO(shape_text(shape) << " on " << nodes << "x" << gpus);
    CHECK(static_cast<int>(members.size()) == l.groups());
    for (const auto& [g, m] : members) {
      CHECK(static_cast<int>(m.size()) == shape.ranks);
      CHECK(*m.rbegin() == shape.ranks - 1);
    }
    // 3x1 on 4 nodes: the fourth node sits it out.
    CHECK(placed == l.groups() * shape.ranks);
  }
}

TEST_CASE("group layout: a node offset pairs other nodes, wrapping around") {
  GroupLayout first({2, 2}, 4, 8, 0), second({2, 2}, 4, 8, 1);
  CHECK(first.nodes_of(0) == std::vector<int>{0, 1});
  CHECK(first.nodes_of(8) == std::vector<int>{2, 3});
  CHECK(second.nodes_of(0) == std::vector<int>{1, 2});
  CHECK(second.nodes_of(8) == std::vector<int>{3, 0});
  CHECK(second.place(0, 5).group == 8 + 5);
  CHECK(second.place(0, 5).member == 1);
}

TEST_CASE("group layout: a local offset pairs other GPUs of a node, wrapping around") {
  GroupLayout first({1, 2}, 2, 8, 0, 0), second({1, 2}, 2, 8, 0, 1);
  CHECK(first.local_ranks_of(1) == std::vector<int>{2, 3});
  CHECK(second.local_ranks_of(1) == std::vector<int>{3, 4});
  CHECK(second.local_ranks_of(3) == std::vector<int>{7, 0});
  CHECK(second.nodes_of(7) == std::vector<int>{1});
  // GPU 0 of node 1 is the second member of the node's last pair; GPU 1 the first of its first.
  CHECK(second.place(1, 0).group == 4 + 3);
  CHECK(second.place(1, 0).member == 1);
  CHECK(second.place(1, 1).group == 4);
  CHECK(second.place(1, 1).member == 0);
  // Every GPU is in a pair of each pass, with another partner in the second.
  for (int g = 0; g < 8; ++g) {
    const auto a = first.local_ranks_of(first.place(0, g).group),
               b = second.local_ranks_of(second.place(0, g).group);
    CHECK(a != b);
  }
}

TEST_CASE("group layout: shapes that do not fit the job are refused") {
  CHECK_THROWS_AS(GroupLayout({8, 8}, 4, 8), autotune::InputError);
  CHECK_THROWS_AS(GroupLayout({1, 3}, 4, 8), autotune::InputError);
  CHECK_THROWS_AS(GroupLayout({1, 1}, 4, 8), autotune::InputError);
  CHECK_THROWS_AS(GroupLayout({2, 3}, 4, 8), autotune::InputError);  // 3 ranks over 2 nodes
}
