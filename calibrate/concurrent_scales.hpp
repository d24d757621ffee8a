#pragma once
// Which scales of a calibration can run at the same time: a scale smaller than the allocation needs only its
// own nodes, so scales whose node counts fit together run side by side on disjoint node sets (on 1,024
// nodes: 512x8 on nodes 0-511 while 512x1 runs on 512-1023), and the whole allocation is held for the longest
// of them instead of for all of them one after another. Rounds run one after another; the scales of a round
// share the fabric (the spine), which the plan and the report say beside their figures.

#include <string>
#include <vector>

#include "calibrate/tune.hpp"
#include "runners/process_setting.hpp"

namespace autotune::calibrate {

struct ScaleGroup {
  runners::Scale scale;
  int first_node = 0;  // the group runs on nodes first_node .. first_node + scale.nodes - 1
};

struct ConcurrentRound {
  std::vector<ScaleGroup> groups;
  double estimated_s = 0.0;  // the longest of its scales
};

// First-fit by decreasing node count over `nodes` nodes, each scale once, in rounds; a scale larger than
// the allocation is not placed (set-up refuses those before). Deterministic: ties keep the plan's order.
// Predicted scales (ScalePlan::predicted) are fitted to the scales measured in full, so their rounds come
// after those of every scale measured in full.
std::vector<ConcurrentRound> schedule_concurrent(const std::vector<ScalePlan>& scales, int nodes);

// Every scale in a round of its own, on the whole allocation, in the plan's order: what runs when the scales
// cannot share it (a layout's groups span the whole job; a budget is shared between jobs, not groups).
std::vector<ConcurrentRound> schedule_in_turn(const std::vector<ScalePlan>& scales);

// Why the scales of this calibration run in turn, when they must (empty: they may run side by side).
std::string in_turn_reason(const TuneOptions& tune);

// What the schedule costs against one scale after another, with the whole allocation held throughout.
struct ScheduleCost {
  int nodes = 0;
  double sequential_s = 0.0;  // every scale in turn
  double concurrent_s = 0.0;  // the rounds in turn
  double sequential_node_hours() const { return nodes * sequential_s / 3600.0; }
  double concurrent_node_hours() const { return nodes * concurrent_s / 3600.0; }
};
ScheduleCost schedule_cost(const std::vector<ScalePlan>& scales, const std::vector<ConcurrentRound>& rounds,
                           int nodes);

// "512-1023" (or "3" for one node), as the journal keeps it (nodes_used); "nodes 512-1023" for people; and
// "512x8 on nodes 512-1023".
std::string node_range(const ScaleGroup& group);

std::string node_range_text(const ScaleGroup& group);
std::string group_text(const ScaleGroup& group);

}  // namespace autotune::calibrate
