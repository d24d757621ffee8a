#pragma once
// The concurrent rounds of one job (one process-wide setting) of an orchestrated calibration: each scale of a
// round (calibrate/concurrent_scales.hpp) is a worker of its own, measuring that scale alone on its nodes
// (the launcher narrowed to them, calibrate/group_launcher.hpp) and journaling them with every measurement;
// a round's workers start together and the next round starts when all have ended. The job's own worker then
// starts on a part seeded with what the groups measured: it replays those (as after an interruption) and
// measures the rest, the predicted scales fitted from them. A group that fails costs nothing but time: its
// scale is measured by the job's own worker.

#include <functional>
#include <string>

#include "calibrate/orchestrator.hpp"
#include "common/clock.hpp"
#include "common/process_launcher.hpp"

namespace autotune::calibrate {

// Where a group of job `job` keeps its part and its output: beside the job's (orchestrator.hpp).
JobFiles group_files(const std::filesystem::path& journal, int job, size_t round, size_t group);

// Runs every round's groups for job `job`; what happens goes to `tell` ("round 1/2: started ..."). False
// when a stop signal ended it (the parts keep what was measured; --resume continues).
bool run_group_rounds(const OrchestratorOptions& o, int job, ProcessLauncher& launcher, const Clock& clock,
                      const std::function<void(const std::string&)>& tell);

// Starts job `job`'s part with the header and the groups' measurements of its setting; how many.
size_t seed_job_part(const OrchestratorOptions& o, int job);

}  // namespace autotune::calibrate
