#pragma once
// DCGM's diagnostics folded into the probe (`probe --dcgm [LEVEL]`): `dcgmi diag -r LEVEL -j` run through
// the CommandRunner seam and its JSON read into DcgmDiag (topology/health_readings.hpp), from which the
// health findings dcgm_diag_fail / dcgm_diag_warn come. DCGM publishes no stable schema for that JSON, so
// both shapes seen are read: DCGM 3's "DCGM GPU Diagnostic" (results by gpu_id) and DCGM 4's "DCGM
// Diagnostic" (results by entity_group / entity_id). Where dcgmi is absent, `ran` is false and `why`
// says so in one line; the probe goes on without it. Thread-safe (pure but for the runner).

#include <string_view>

#include "topology/command_runner.hpp"
#include "topology/health_readings.hpp"

namespace autotune::topology {

// Levels 1 (quick, about a minute) to 4 (extended, hours), as dcgmi defines them. Throws InputError
// ("<arguments>") for another level.
DcgmDiag run_dcgm_diag(const CommandRunner& runner, int level);

// What run_dcgm_diag makes of dcgmi's output and exit status (exposed for tests).
DcgmDiag parse_dcgm_diag(std::string_view output, int exit_status, int level);

}  // namespace autotune::topology
