#include "calibrate/concurrent_scales.hpp"

#include <algorithm>

#include "search/journal.hpp"

namespace autotune::calibrate {

namespace {

// First-fit of the scales of one phase into rounds of their own, after `rounds`.
void fit_rounds(const std::vector<ScalePlan>& scales, bool predicted, int nodes,
                std::vector<ConcurrentRound>& rounds) {
  std::vector<size_t> order;
  for (size_t i = 0; i < scales.size(); ++i)
    if (scales[i].predicted == predicted) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scales[a].scale.nodes > scales[b].scale.nodes; });
  const size_t first = rounds.size();
  std::vector<int> used(rounds.size(), nodes);  // nodes taken in each round; earlier phases' are closed
  for (size_t i : order) {
    const ScalePlan& sp = scales[i];
    if (sp.scale.nodes > nodes || sp.jobs == 0) continue;
    size_t r = first;
    while (r < rounds.size() && used[r] + sp.scale.nodes > nodes) ++r;
    if (r == rounds.size()) {
      rounds.emplace_back();
      used.push_back(0);
    }
    rounds[r].groups.push_back({sp.scale, used[r]});
    used[r] += sp.scale.nodes;
    rounds[r].estimated_s = std::max(rounds[r].estimated_s, sp.estimated_s);
  }
}

}  // namespace

// A predicted scale is fitted to the smaller scales measured in full: its rounds come after theirs.
std::vector<ConcurrentRound> schedule_concurrent(const std::vector<ScalePlan>& scales, int nodes) {
  std::vector<ConcurrentRound> rounds;
  fit_rounds(scales, false, nodes, rounds);
  fit_rounds(scales, true, nodes, rounds);
  return rounds;
}

std::vector<ConcurrentRound> schedule_in_turn(const std::vector<ScalePlan>& scales) {
  std::vector<ConcurrentRound> rounds;
  for (const auto& sp : scales)
    if (sp.jobs > 0) rounds.push_back({{{sp.scale, 0}}, sp.estimated_s});
  return rounds;
}

std::string in_turn_reason(const TuneOptions& tune) {
  if (tune.header.layout) return "a layout's groups run across the whole job, as the job runs them";
  if (tune.budget) return "--budget shares time between jobs, not groups";
  return "";
}

ScheduleCost schedule_cost(const std::vector<ScalePlan>& scales, const std::vector<ConcurrentRound>& rounds,
                           int nodes) {
  ScheduleCost cost;
  cost.nodes = nodes;
  for (const auto& sp : scales) cost.sequential_s += sp.estimated_s;
  for (const auto& r : rounds) cost.concurrent_s += r.estimated_s;
  return cost;
}

std::string node_range(const ScaleGroup& group) {
  return search::node_range({group.first_node, group.scale.nodes});
}

std::string node_range_text(const ScaleGroup& group) {
  return (group.scale.nodes == 1 ? "node " : "nodes ") + node_range(group);
}

std::string group_text(const ScaleGroup& group) {
  return runners::shape_text(group.scale) + " on " + node_range_text(group);
}

}  // namespace autotune::calibrate
