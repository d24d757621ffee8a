#pragma once
// The health check tune runs before it calibrates (tuner::CalibrationContext::check_health): check in
// process, on the simulator or on the job's processes under mpirun/srun, or, for tune orchestrating jobs
// on GPUs, `nccl-autotune check --format json --output FILE` as a job of its own started through the same
// launcher as the calibration's jobs, its JSON read back. Not thread-safe.

#include "check/check.hpp"
#include "common/process_launcher.hpp"
#include "tuner/calibration_setup.hpp"

namespace autotune::check {

// Throws InputError for a simulated job the simulator cannot model; std::runtime_error when the check job
// ends without a result (with the tail of its output) or the GPUs cannot be measured.
// `launcher` (null = fork/exec) starts the check job; `progress` hears of each pass run in process.
tuner::ClusterHealth check_before_tune(const tuner::HealthCheckRequest& request,
                                       ProcessLauncher* launcher = nullptr,
                                       const CheckProgressFn& progress = {});

}  // namespace autotune::check
