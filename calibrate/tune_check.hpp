#pragma once
// The health check tune runs before it calibrates (CalibrationContext::check_health): check in
// process, on the simulator or on the job's processes under mpirun/srun, or, for tune orchestrating jobs
// on GPUs, `nccl-autotune check --format json --output FILE` as a job of its own started through the same
// launcher as the calibration's jobs, its JSON read back. Not thread-safe.

#include "calibrate/calibration_setup.hpp"
#include "check/check.hpp"
#include "common/process_launcher.hpp"

namespace autotune::calibrate {

// Throws InputError for a simulated job the simulator cannot model; std::runtime_error when the check job
// ends without a result (with the tail of its output) or the GPUs cannot be measured.
// `launcher` (null = fork/exec) starts the check job; `progress` hears of each pass run in process.
check::ClusterHealth check_before_tune(const HealthCheckRequest& request, ProcessLauncher* launcher = nullptr,
                                       const check::CheckProgressFn& progress = {});

}  // namespace autotune::calibrate
