#include "calibrate/tune_check.hpp"

#include <unistd.h>

#include <stdexcept>

#include "calibrate/orchestrator.hpp"
#include "check/check_context.hpp"
#include "check/check_json.hpp"
#include "common/input_file.hpp"

namespace autotune::calibrate {
namespace {

// check as a job of its own, through the calibration's launcher: its result is the JSON it leaves behind
// (it exits 1 when a node blocks, which is a result, not a failure).
check::ClusterHealth check_job(const HealthCheckRequest& r, ProcessLauncher* given) {
  std::filesystem::create_directories(r.work_dir);
  const std::string stem = "check-" + std::to_string(::getpid());
  const auto result = r.work_dir / (stem + ".json"), log = r.work_dir / (stem + ".log");
  std::filesystem::remove(result);
  std::vector<std::string> args = {"check", "--format", "json", "--output", result.string()};
  if (r.bytes != check::CheckOptions{}.bytes)
    args.insert(args.begin() + 1, {"--bytes", std::to_string(r.bytes)});
  if (r.runner.watchdog_scale != 1.0)
    args.insert(args.begin() + 1, {"--watchdog-scale", std::to_string(r.runner.watchdog_scale)});
  ProcessSpec spec{job_command(r.launcher, r.exe, args, {"default", {}}), environment_map(), log};
  std::unique_ptr<ProcessLauncher> own = given ? nullptr : make_posix_launcher();
  ProcessLauncher& launcher = given ? *given : *own;
  std::error_code ec;
  const uintmax_t log_start = std::filesystem::exists(log, ec) ? std::filesystem::file_size(log) : 0;
  const std::string why = run_job(launcher, steady_clock(), spec, std::nullopt);
  if (!std::filesystem::exists(result)) {
    const std::string tail = output_tail(log, log_start);
    throw std::runtime_error("the health check job (" + describe(r.launcher) + ") left no result" +
                             (why.empty() ? "" : ": " + why) + (tail.empty() ? "" : ", output:\n" + tail));
  }
  return check::read_check_json(read_file(result), result.string());
}

}  // namespace

check::ClusterHealth check_before_tune(const HealthCheckRequest& r, ProcessLauncher* launcher,
                                       const check::CheckProgressFn& progress) {
  check::CheckOptions options;
  options.bytes = r.bytes;
  if (r.runner.simulate) {
    return check::cluster_health(check::run_check(options, check::simulated_context(r.runner), progress));
  }
  if (r.mode == CalibrationMode::orchestrator) return check_job(r, launcher);
  const runners::SingleProcess alone;
  const runners::ProcessGroup& processes = r.processes ? *r.processes : alone;
  return check::cluster_health(check::run_check(
      options, check::job_context(processes, check::live_node_record, options.bytes, r.runner.watchdog_scale),
      progress));
}

}  // namespace autotune::calibrate
