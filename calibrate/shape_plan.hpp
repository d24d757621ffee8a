#pragma once
// What a calibration measures on each communicator shape: the operations asked for it (by --shapes, or those
// of every kind of group a parallel layout puts on it), split into the collectives tune's search sweeps
// (candidates, rules) and the point-to-point operations (all-to-all, send/recv, ...), which NCCL asks no
// tuner for: those are measured at NCCL's default at every size, under each process-wide setting, and no
// rule comes of them. A shape that runs only point-to-point operations is a scale of its own. Pure
// functions.

#include <string>
#include <vector>

#include "calibrate/shapes.hpp"
#include "nccl/operation.hpp"
#include "search/search_space.hpp"

namespace autotune::calibrate {

struct ShapePlan {
  runners::Scale shape;
  std::vector<LayoutGroup> kinds;               // the layout's groups of this shape; none without a layout
  std::vector<nccl::Operation> operations;      // everything this shape is asked to run
  std::vector<nccl::Collective> collectives;    // the collectives the search sweeps on it
  std::vector<nccl::Operation> point_to_point;  // measured at NCCL's default only (no rule can exist)
  std::vector<nccl::Operation> not_asked;       // collectives --collectives left out
  bool measured() const { return !collectives.empty() || !point_to_point.empty(); }
};

// The plan of one shape: `operations` (empty: the calibration's collectives) against `collectives` (the ones
// --collectives names; empty: all five).
ShapePlan plan_shape(const runners::Scale& shape, const std::vector<nccl::Operation>& operations,
                     const std::vector<nccl::Collective>& collectives, std::vector<LayoutGroup> kinds = {});

// The shapes of a layout's groups, each with the union of its kinds' operations, in the groups' order.
std::vector<ShapePlan> plan_layout(const std::vector<LayoutGroup>& groups,
                                   const std::vector<nccl::Collective>& collectives);

// What the search measures: the measured shapes as scales, the union of their collectives (in NCCL's order)
// and each scale's own collectives and point-to-point operations.
void apply_plans(const std::vector<ShapePlan>& plans, search::SearchSpaceOptions& space);

// One line per kind of group (or per shape without a layout): "tp (tensor parallel): 64 groups of 1x2,
// measured all at once: allreduce, allgather, reducescatter"; point-to-point operations say that only NCCL's
// default is measured and why, collectives --collectives left out are said too.
std::vector<std::string> describe_plans(const std::vector<ShapePlan>& plans);

}  // namespace autotune::calibrate
