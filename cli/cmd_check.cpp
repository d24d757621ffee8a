// nccl-autotune check: every node's health and measured baselines across an allocation, or the simulator.
// Wiring only: options in, check/ measures and judges, the report out.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "calibrate/journal_check.hpp"
#include "check/check_context.hpp"
#include "check/check_json.hpp"
#include "cli/check_slurm_health.hpp"
#include "cli/check_text.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/simulator_options.hpp"
#include "common/atomic_file.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "measure/runner_factory.hpp"
#include "runners/process_group.hpp"

namespace autotune::cli {
namespace {

struct CheckArgs {
  std::string bytes = "256M", format = "text", output, journal;
  int reps = 5;
  double watchdog_scale = 1.0;
  SimulatorArgs simulator;
  SlurmHealthArgs slurm;
};

void describe_check(CommandSpec& spec, CheckArgs& a) {
  spec.usage = "nccl-autotune check " + std::string(kSimulatorUsage) +
               " [--bytes 256M] [--reps 5] [--health-only] [--watchdog-scale X] [--format text|json] "
               "[--output FILE]\n"
               "       nccl-autotune check --journal FILE [--format text|json] [--output FILE]\n"
               "       nccl-autotune check --slurm-health [--node NAME] [--input FILE] [--store DIR] "
               "[--health-only] [--bytes 64M]";
  spec.description =
      "Checks every node of an allocation before a calibration: its health (the probe's findings), then its "
      "own all-reduce, every GPU's pairs and every NIC rail between nodes, measured with all groups at once "
      "and compared with the median of the nodes and with what the probe says the hardware can do. Run it "
      "under srun/mpirun (one process per GPU) or on one node; --simulate checks the labelled simulator. "
      "Exit status 0 when no node blocks, 1 when one does, 2 on bad input. See docs/health.md.\n"
      "--slurm-health checks this node alone, as Slurm's HealthCheckProgram: a blocking finding drains it "
      "(scontrol, reason \"nccl-autotune: <finding>\"); a node this check drained is resumed once healthy; a "
      "node drained for another reason is left alone. See docs/operations.md.\n"
      "--journal FILE reads a calibration's journal instead of measuring: a group of a shape measured "
      "several "
      "at once (--parallelism) that ran below 90% (warn) or 80% (block) of its shape's median group is a "
      "calibration_group_slow finding on each of its nodes.";
  add_simulator_options(spec.options, a.simulator, "check the labelled simulator instead of GPUs");
  spec.options.add_options()("bytes", po::value(&a.bytes)->default_value(a.bytes),
                             "all-reduce size of every pass")(
      "reps", po::value(&a.reps)->default_value(a.reps), "timed repetitions per pass")(
      "health-only", "the probe's findings on every node, nothing measured")(
      "watchdog-scale", po::value(&a.watchdog_scale)->default_value(1.0),
      "multiplies how long a pass's operation may take before it is declared hung (tune passes its own)")(
      "format", po::value(&a.format)->default_value(a.format), "text or json")(
      "output", po::value(&a.output), "also write the JSON report to FILE")(
      "journal", po::value(&a.journal),
      "measure nothing: report per node the groups a calibration journal shows slower than their shape's "
      "median group");
  add_slurm_health_options(spec.options, a.slurm);
}

check::CheckProgressFn progress_printer(bool tty) {
  return [tty](const check::CheckProgress& p) {
    std::fprintf(stderr, "%scheck: %d/%d passes done (%s), %.1f s elapsed", tty ? "\r\033[K" : "", p.done,
                 p.total, p.pass.c_str(), p.elapsed_s);
    if (p.remaining_s >= 0 && p.done < p.total) std::fprintf(stderr, ", ~%.0f s left", p.remaining_s);
    std::fprintf(stderr, tty ? "" : "\n");
    std::fflush(stderr);
  };
}

// The report in the format asked for, also as JSON in --output; the exit status.
int report_check(const check::CheckReport& report, const CheckArgs& a) {
  const std::string json = check::to_json(report);
  if (!a.output.empty()) write_file_atomically(a.output, json);
  std::cout << (a.format == "json" ? json : check_text(report));
  return report.blocks() ? kExitFailed : kExitOk;
}

}  // namespace

int cmd_check(const Args& args) {
  CommandSpec spec;
  CheckArgs a;
  describe_check(spec, a);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (a.format != "text" && a.format != "json")
    throw InputError("<arguments>", 0, "--format: expected text or json, found '" + a.format + "'");
  if (a.reps < 1 || a.reps > 10000)
    throw InputError("<arguments>", 0, "--reps: expected 1 to 10000, found " + std::to_string(a.reps));
  if (!vm->count("slurm-health") && (vm->count("node") || vm->count("input") || vm->count("store")))
    throw InputError("<arguments>", 0, "--node, --input, --store: expected with --slurm-health only");
  if (vm->count("journal") &&
      (vm->count("slurm-health") || vm->count("simulate") || vm->count("health-only")))
    throw InputError("<arguments>", 0,
                     "--journal: expected without --slurm-health, --simulate and --health-only");
  if (vm->count("journal")) return report_check(calibrate::check_journal(a.journal), a);
  if (vm->count("slurm-health")) {
    const uint64_t bytes =
        require_byte_size(vm->count("bytes") && !(*vm)["bytes"].defaulted() ? a.bytes : "64M", "--bytes");
    return run_slurm_health(*vm, a.slurm, bytes, a.reps);
  }
  check::CheckOptions options;
  options.bytes = require_byte_size(a.bytes, "--bytes");
  options.repetitions = a.reps;
  options.measure = vm->count("health-only") == 0;
  options.watchdog_scale = require_watchdog_scale(a.watchdog_scale);
  const std::optional<sim::SimulatorSpec> simulated = simulator_spec(*vm, a.simulator);
  const auto& processes = runners::job_processes();
  const check::CheckContext context =
      simulated
          ? check::simulated_context(measure::simulated_runner_options(*simulated))
          : check::job_context(processes, check::live_node_record, options.bytes, options.watchdog_scale);
  const bool root = processes.is_root(), tty = root && ::isatty(STDERR_FILENO);
  const auto report =
      check::run_check(options, context, root ? progress_printer(tty) : check::CheckProgressFn{});
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!root) return report.blocks() ? kExitFailed : kExitOk;
  return report_check(report, a);
}

}  // namespace autotune::cli
