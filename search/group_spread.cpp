#include "search/group_spread.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/input_error.hpp"
#include "runners/group_layout.hpp"
#include "search/gain_interval.hpp"

namespace autotune::search {
namespace {

// Where a shape took its groups from: the whole allocation, or the part a scale measured side by side with
// others ran on (the record's nodes_used, "512-767" or "3").
std::optional<NodeSpan> spread_node_span(const JournalRecord& r, const GroupGeometry& g) {
  if (r.nodes_used.empty()) return NodeSpan{0, g.nodes};
  return parse_node_range(r.nodes_used);
}

// A measurement whose groups can be compared: it ran, at a size where bandwidth and not latency decides,
// with every group timed. Below about 1 MiB a group's time is mostly latency, which a slow clock or link
// hardly changes: on the simulated 4 x H100 with one GPU at 60% of its clock, that node's tp=8 group ran at
// 0.97 of the median group at 8 B..512 KiB and at 0.84 at 1..4 MiB; counting small sizes would pull every
// group's median towards 1 and hide the straggler.
bool spread_counts(const runners::Measurement& m) {
  if (m.outcome != runners::Outcome::ok || m.request.bytes < kSpreadMinBytes) return false;
  if (m.group_times_us.size() < 2) return false;
  return std::all_of(m.group_times_us.begin(), m.group_times_us.end(), [](double t) { return t > 0.0; });
}

// One shape at one place: its layout, and per group every measurement's time over its median group's.
struct ShapeSpread {
  runners::Scale shape;
  std::optional<runners::GroupLayout> layout;  // nullopt: the shape does not fit (a journal of elsewhere)
  int first_node = 0;
  int gpus_per_node = 0;
  std::vector<std::vector<double>> time_ratios;
};

std::optional<runners::GroupLayout> spread_layout(const runners::Scale& shape, const NodeSpan& span,
                                                  int gpus) {
  try {
    return runners::GroupLayout(shape, span.count, gpus);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void add_measurement(ShapeSpread& s, const runners::Measurement& m) {
  if (!s.layout || static_cast<size_t>(s.layout->groups()) != m.group_times_us.size()) return;
  const double median = median_of(m.group_times_us);
  s.time_ratios.resize(m.group_times_us.size());
  for (size_t g = 0; g < m.group_times_us.size(); ++g)
    s.time_ratios[g].push_back(m.group_times_us[g] / median);
}

GroupSpread spread_of(const ShapeSpread& s, int group) {
  GroupSpread out;
  out.shape = s.shape;
  out.group = group;
  for (int n : s.layout->nodes_of(group)) out.nodes.push_back(s.first_node + n);
  out.gpus = s.layout->local_ranks_of(group);
  for (auto* v : {&out.nodes, &out.gpus}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  if (static_cast<int>(out.gpus.size()) == s.gpus_per_node) out.gpus.clear();
  const auto& ratios = s.time_ratios[static_cast<size_t>(group)];
  out.measurements = static_cast<int>(ratios.size());
  out.ratio = 1.0 / median_of(ratios);
  return out;
}

// "node 3", "nodes 6-7", or "nodes 0,5" when a group's nodes are not consecutive.
std::string spread_nodes_text(const std::vector<int>& nodes) {
  const int count = static_cast<int>(nodes.size());
  if (nodes.back() - nodes.front() + 1 == count)
    return (count == 1 ? "node " : "nodes ") + node_range({nodes.front(), count});
  return fmt::format("nodes {}", fmt::join(nodes, ","));
}

}  // namespace

std::string GroupSpread::place() const {
  std::string out = spread_nodes_text(nodes);
  if (!gpus.empty()) out += fmt::format(", GPU{} {}", gpus.size() == 1 ? "" : "s", fmt::join(gpus, ","));
  return out;
}

std::string GroupSpread::describe() const {
  return fmt::format("{} group {} ({}): {:.2f} of the median group over {} measurement{}",
                     runners::shape_text(shape), group, place(), ratio, measurements,
                     measurements == 1 ? "" : "s");
}

std::vector<GroupSpread> group_spreads(std::span<const JournalRecord> records,
                                       const GroupGeometry& geometry) {
  std::vector<ShapeSpread> shapes;  // in the order they first appear
  std::map<std::pair<runners::Scale, std::string>, size_t> index;
  for (const auto& r : records) {
    if (!spread_counts(r.measurement)) continue;
    const auto span = spread_node_span(r, geometry);
    if (!span) continue;
    auto [it, added] = index.try_emplace({r.scale, r.nodes_used}, shapes.size());
    if (added)
      shapes.push_back({r.scale,
                        spread_layout(r.scale, *span, geometry.gpus_per_node),
                        span->first,
                        geometry.gpus_per_node,
                        {}});
    add_measurement(shapes[it->second], r.measurement);
  }
  std::vector<GroupSpread> out;
  for (const auto& s : shapes)
    for (size_t g = 0; g < s.time_ratios.size(); ++g) out.push_back(spread_of(s, static_cast<int>(g)));
  return out;
}

}  // namespace autotune::search
