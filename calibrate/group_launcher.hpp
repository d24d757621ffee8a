#pragma once
// The launcher line of one group of concurrent scales (calibrate/concurrent_scales.hpp): the allocation's
// launcher narrowed to the group's nodes, so that groups run side by side on disjoint nodes. srun takes the
// group's node count and its offset in the allocation (-N n --relative=first: no host names needed);
// mpirun/mpiexec with a host list (-H/--host a:8,b:8) takes the group's slice of it and the group's rank
// count. Other launchers (or mpirun without a host list) cannot be narrowed: nullopt, and the scales run in
// turn.

#include <optional>

#include "calibrate/concurrent_scales.hpp"
#include "calibrate/orchestrator.hpp"

namespace autotune::calibrate {

std::optional<Launcher> launcher_for_group(const Launcher& whole, const ScaleGroup& group);

}  // namespace autotune::calibrate
