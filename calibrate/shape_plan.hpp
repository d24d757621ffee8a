#pragma once
// What a calibration measures on each communicator shape: the operations asked for it (by --shapes, or those
// of every kind of group a parallel layout puts on it), split into the collectives tune's search measures and
// the point-to-point operations (all-to-all, send/recv, ...) it does not sweep yet. Those are kept in the
// plan and said, never dropped silently. Pure functions.

#include <string>
#include <vector>

#include "calibrate/shapes.hpp"
#include "nccl/operation.hpp"
#include "search/search_space.hpp"

namespace autotune::calibrate {

// Whether tune measures `op`. The runners measure point-to-point operations (MeasureRequest::operation,
// `bench -c alltoall`), but tune's search sweeps collectives only (candidates, rules); this is the one place
// point-to-point operations are switched on once it sweeps them (NCCL's default at every size, under each
// process-wide setting: search/p2p_setting.hpp judges those). Until then they are planned and reported as
// "not measured by tune yet".
bool runner_measures(nccl::Operation op);

struct ShapePlan {
  runners::Scale shape;
  std::vector<LayoutGroup> kinds;               // the layout's groups of this shape; none without a layout
  std::vector<nccl::Operation> operations;      // everything this shape is asked to run
  std::vector<nccl::Collective> collectives;    // what is measured on it (none: the shape is not measured)
  std::vector<nccl::Operation> not_measurable;  // asked for, the runner cannot measure them yet
  std::vector<nccl::Operation> not_asked;       // collectives --collectives left out
};

// The plan of one shape: `operations` (empty: the calibration's collectives) against `collectives` (the ones
// --collectives names; empty: all five).
ShapePlan plan_shape(const runners::Scale& shape, const std::vector<nccl::Operation>& operations,
                     const std::vector<nccl::Collective>& collectives, std::vector<LayoutGroup> kinds = {});

// The shapes of a layout's groups, each with the union of its kinds' operations, in the groups' order.
std::vector<ShapePlan> plan_layout(const std::vector<LayoutGroup>& groups,
                                   const std::vector<nccl::Collective>& collectives);

// What the search measures: the measured shapes as scales, the union of their collectives (in NCCL's order)
// and each scale's own.
void apply_plans(const std::vector<ShapePlan>& plans, search::SearchSpaceOptions& space);

// One line per kind of group (or per shape without a layout): "tp (tensor parallel): 64 groups of 1x2,
// measured all at once: allreduce, allgather, reducescatter", and what is not measured and why.
std::vector<std::string> describe_plans(const std::vector<ShapePlan>& plans);

}  // namespace autotune::calibrate
