// nccl-autotune check: every node's health and measured baselines across an allocation, or the simulator.
// Wiring only: options in, check/ measures and judges, the report out.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "check/check_context.hpp"
#include "check/check_json.hpp"
#include "cli/check_text.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/atomic_file.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "runners/process_group.hpp"
#include "simulator/sim_fault.hpp"
#include "topology/examples.hpp"
#include "topology/reader.hpp"

namespace autotune::cli {
namespace {

struct CheckArgs {
  std::string example, topology_file, bytes = "256M", format = "text", output;
  std::vector<std::string> faults;
  int nodes = 1, reps = 5;
  uint64_t seed = 1;
  double noise = 0.03;
};

void describe_check(CommandSpec& spec, CheckArgs& a) {
  spec.usage =
      "nccl-autotune check [--simulate [--example NAME | --topology FILE] [--nodes N] [--sim-fault F]...] "
      "[--bytes 256M] [--reps 5] [--health-only] [--format text|json] [--output FILE]";
  spec.description =
      "Checks every node of an allocation before a calibration: its health (the probe's findings), then its "
      "own all-reduce, every GPU's pairs and every NIC rail between nodes, measured with all groups at once "
      "and compared with the median of the nodes and with what the probe says the hardware can do. Run it "
      "under srun/mpirun (one process per GPU) or on one node; --simulate checks the labelled simulator. "
      "Exit status 0 when no node blocks, 1 when one does, 2 on bad input. See docs/health.md.";
  spec.options.add_options()("simulate", "check the labelled simulator instead of GPUs")(
      "example", po::value(&a.example), "simulator: a bundled node (default h100-8x)")(
      "topology", po::value(&a.topology_file), "simulator: a probed node (hwloc, NCCL XML or probe JSON)")(
      "nodes", po::value(&a.nodes)->default_value(a.nodes), "simulator: how many such nodes")(
      "seed", po::value(&a.seed)->default_value(a.seed), "simulator: noise seed")(
      "noise", po::value(&a.noise)->default_value(a.noise), "simulator: relative noise per repetition")(
      "sim-fault", po::value(&a.faults)->composing(),
      "simulator: a sick node, repeatable: node=N,nic=K,rate=F | node=N,gpu=K,clock=F | "
      "node=N,gpu=K,nvlink=F")("bytes", po::value(&a.bytes)->default_value(a.bytes),
                               "all-reduce size of every pass")(
      "reps", po::value(&a.reps)->default_value(a.reps), "timed repetitions per pass")(
      "health-only", "the probe's findings on every node, nothing measured")(
      "format", po::value(&a.format)->default_value(a.format), "text or json")(
      "output", po::value(&a.output), "also write the JSON report to FILE");
}

check::CheckContext simulated(const CheckArgs& a) {
  if (!a.example.empty() && !a.topology_file.empty())
    throw InputError("<arguments>", 0, "expected either --example or --topology, found both");
  check::SimulatedJob job;
  job.node = a.topology_file.empty() ? topology::load_example(a.example.empty() ? "h100-8x" : a.example)
                                     : topology::read_topology_file(a.topology_file);
  job.nodes = a.nodes;
  for (const auto& f : a.faults) job.faults.push_back(sim::parse_sim_fault(f));
  job.seed = a.seed;
  job.noise = a.noise;
  return check::simulated_context(job);
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
  check::CheckOptions options;
  options.bytes = require_byte_size(a.bytes, "--bytes");
  options.repetitions = a.reps;
  options.measure = vm->count("health-only") == 0;
  const bool simulate = vm->count("simulate") > 0;
  if (!simulate && (!a.example.empty() || !a.topology_file.empty() || a.nodes != 1 || !a.faults.empty()))
    throw InputError("<arguments>", 0,
                     "--example, --topology, --nodes and --sim-fault describe the simulator: add --simulate");
  if (simulate && a.nodes < 1)
    throw InputError("<arguments>", 0, "--nodes: expected at least 1, found " + std::to_string(a.nodes));
  const auto& processes = runners::job_processes();
  const check::CheckContext context =
      simulate ? simulated(a) : check::job_context(processes, check::live_node_record, options.bytes);
  const bool root = processes.is_root(), tty = root && ::isatty(STDERR_FILENO);
  const auto report =
      check::run_check(options, context, root ? progress_printer(tty) : check::CheckProgressFn{});
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!root) return report.blocks() ? kExitFailed : kExitOk;
  const std::string json = check::to_json(report);
  if (!a.output.empty()) write_file_atomically(a.output, json);
  std::cout << (a.format == "json" ? json : check_text(report));
  return report.blocks() ? kExitFailed : kExitOk;
}

}  // namespace autotune::cli
