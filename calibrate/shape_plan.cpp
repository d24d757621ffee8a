#include "calibrate/shape_plan.hpp"

#include <algorithm>

namespace autotune::calibrate {
namespace {

template <typename T>
bool holds(const std::vector<T>& items, const T& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string names(const std::vector<nccl::Operation>& ops) {
  std::string out;
  for (auto op : ops) out += (out.empty() ? "" : ", ") + std::string(nccl::name(op));
  return out;
}

// What is measured and what is not, for the operations `ops` of a shape planned as `p`.
std::string measured_text(const ShapePlan& p, const std::vector<nccl::Operation>& ops) {
  std::vector<nccl::Operation> swept, p2p, unasked;
  for (auto op : ops) {
    if (holds(p.not_asked, op))
      unasked.push_back(op);
    else if (nccl::is_point_to_point(op))
      p2p.push_back(op);
    else
      swept.push_back(op);
  }
  std::vector<nccl::Operation> measured = swept;
  measured.insert(measured.end(), p2p.begin(), p2p.end());
  std::string out = measured.empty() ? "nothing measured" : "measured all at once: " + names(measured);
  if (!p2p.empty())
    out += " (" + (swept.empty() ? std::string() : names(p2p) + ": ") +
           "point-to-point, NCCL's default at every size under each process-wide setting; no per-call rule "
           "exists)";
  if (!unasked.empty()) out += "; " + names(unasked) + " not asked for (--collectives)";
  return out;
}

}  // namespace

ShapePlan plan_shape(const runners::Scale& shape, const std::vector<nccl::Operation>& operations,
                     const std::vector<nccl::Collective>& collectives, std::vector<LayoutGroup> kinds) {
  ShapePlan p{shape, std::move(kinds), operations, {}, {}, {}};
  if (p.operations.empty())
    for (auto c : collectives.empty() ? std::vector<nccl::Collective>(nccl::kAllCollectives.begin(),
                                                                      nccl::kAllCollectives.end())
                                      : collectives)
      p.operations.push_back(nccl::to_operation(c));
  for (auto op : p.operations) {
    const auto c = nccl::as_collective(op);
    if (!c)
      p.point_to_point.push_back(op);
    else if (!collectives.empty() && !holds(collectives, *c))
      p.not_asked.push_back(op);
    else
      p.collectives.push_back(*c);
  }
  return p;
}

std::vector<ShapePlan> plan_layout(const std::vector<LayoutGroup>& groups,
                                   const std::vector<nccl::Collective>& collectives) {
  std::vector<runners::Scale> shapes;
  for (const auto& g : groups)
    if (!holds(shapes, shape_of(g))) shapes.push_back(shape_of(g));
  std::vector<ShapePlan> out;
  for (const auto& shape : shapes) {
    std::vector<LayoutGroup> kinds;
    std::vector<nccl::Operation> ops;
    for (const auto& g : groups) {
      if (!(shape_of(g) == shape)) continue;
      kinds.push_back(g);
      for (auto op : g.operations)
        if (!holds(ops, op)) ops.push_back(op);
    }
    out.push_back(plan_shape(shape, ops, collectives, std::move(kinds)));
  }
  return out;
}

void apply_plans(const std::vector<ShapePlan>& plans, search::SearchSpaceOptions& space) {
  space.scales.clear();
  space.scale_collectives.clear();
  space.scale_point_to_point.clear();
  std::vector<nccl::Collective> all;
  for (const auto& p : plans) {
    if (!p.measured()) continue;
    space.scales.push_back(p.shape);
    space.scale_collectives[p.shape] = p.collectives;
    if (!p.point_to_point.empty()) space.scale_point_to_point[p.shape] = p.point_to_point;
    for (auto c : p.collectives)
      if (!holds(all, c)) all.push_back(c);
  }
  space.collectives.clear();
  for (auto c : nccl::kAllCollectives)
    if (holds(all, c)) space.collectives.push_back(c);
}

std::vector<std::string> describe_plans(const std::vector<ShapePlan>& plans) {
  std::vector<std::string> out;
  for (const auto& p : plans) {
    const std::string shape = runners::shape_text(p.shape);
    if (p.kinds.empty()) out.push_back("shape " + shape + ": " + measured_text(p, p.operations));
    for (const auto& g : p.kinds)
      out.push_back(g.kind + " (" + std::string(profiles::kind_title(g.kind).value_or(g.kind)) +
                    "): " + std::to_string(g.groups) + (g.groups == 1 ? " group" : " groups") + " of " +
                    shape + ", " + measured_text(p, g.operations));
  }
  return out;
}

}  // namespace autotune::calibrate
