#include "cli/check_slurm_health.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "check/check_context.hpp"
#include "check/slurm_health.hpp"
#include "common/host_name.hpp"
#include "common/input_error.hpp"
#include "profiles/upkeep_record.hpp"
#include "runners/process_group.hpp"
#include "topology/reader.hpp"

namespace autotune::cli {
namespace {

// The node's findings: its recorded topology's (--input), else its live probe's, and where it has GPUs and
// the check was not limited to health, its own all-reduce and GPU pairs measured as `check` measures them.
std::vector<topology::HealthFinding> node_findings(const po::variables_map& vm, const SlurmHealthArgs& a,
                                                   uint64_t bytes, int reps) {
  const check::NodeRecord record = a.input.empty()
                                       ? check::live_node_record()
                                       : check::NodeRecord{a.node, topology::read_topology_file(a.input)};
  check::CheckOptions options;
  options.bytes = bytes;
  options.repetitions = reps;
  options.measure = a.input.empty() && !vm.count("health-only") && !record.topology.gpus.empty();
  check::CheckContext context;
  if (options.measure) {
    context = check::job_context(
        runners::SingleProcess{}, [&] { return record; }, bytes);
  } else {
    context.nodes = {record};
    context.gpus_per_node = static_cast<int>(record.topology.gpus.size());
    context.source = a.input.empty() ? "measured" : "recorded";
  }
  return check::run_check(options, context).nodes.front().health.findings;
}

void record_in_store(const std::string& store, const std::string& node,
                     const std::vector<topology::HealthFinding>& findings,
                     const check::SlurmHealthResult& r) {
  try {
    profiles::write_upkeep_record(store, {"check",
                                          node,
                                          std::string(topology::node_status(findings)),
                                          static_cast<int64_t>(std::time(nullptr)),
                                          r.decision.why,
                                          {{"drained", check::drained_by_check(r) ? "true" : "false"}}});
  } catch (const std::exception& e) {
    std::cerr << "warning: the store keeps no record of this check: " << e.what() << "\n";
  }
}

}  // namespace

void add_slurm_health_options(po::options_description& options, SlurmHealthArgs& a) {
  options.add_options()(
      "slurm-health",
      "one node, as Slurm's HealthCheckProgram: drain it on a blocking finding, resume it when "
      "healthy if this check drained it")(
      "node", po::value(&a.node),
      "with --slurm-health: the Slurm node name (default: $SLURMD_NODENAME, else "
      "the host name)")("input", po::value(&a.input),
                        "with --slurm-health: a recorded node (probe's --input) instead of this one")(
      "store", po::value(&a.store),
      "with --slurm-health: record the result in this store (default: "
      "$NCCL_AUTOTUNE_STORE when set)");
}

int run_slurm_health(const po::variables_map& vm, const SlurmHealthArgs& given, uint64_t bytes, int reps) {
  const auto started = steady_clock().now();
  SlurmHealthArgs a = given;
  if (vm.count("simulate"))
    throw InputError("<arguments>", 0, "--slurm-health: expected a node, not --simulate");
  if (a.node.empty()) a.node = std::getenv("SLURMD_NODENAME") ? std::getenv("SLURMD_NODENAME") : host_name();
  if (a.node.empty()) throw InputError("<arguments>", 0, "--node: expected the Slurm node name; found none");
  if (a.store.empty() && std::getenv("NCCL_AUTOTUNE_STORE")) a.store = std::getenv("NCCL_AUTOTUNE_STORE");
  const auto findings = node_findings(vm, a, bytes, reps);
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path scratch = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                                        ("nccl-autotune-scontrol-" + std::to_string(::getpid()) + ".out");
  const auto launcher = make_posix_launcher();
  const check::SlurmHealthResult r =
      check::apply_slurm_health(a.node, findings, *launcher, steady_clock(), scratch);
  if (!a.store.empty()) record_in_store(a.store, a.node, findings, r);
  std::printf("check --slurm-health: %s: %s (%.2f s)\n", a.node.c_str(), r.decision.why.c_str(),
              steady_clock().seconds_since(started));
  return topology::may_calibrate(findings) ? kExitOk : kExitFailed;
}

}  // namespace autotune::cli
