// nccl-autotune tune: calibrate the cluster (or the simulator) and write a profile. Wiring only: options
// become a calibrate::CalibrationRequest; the set-up lives in calibrate/, the search, the journal and the
// derivation in search/.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "autotune/version.hpp"
#include "calibrate/calibration_setup.hpp"
#include "calibrate/p2p_candidates.hpp"
#include "calibrate/progress_report.hpp"
#include "calibrate/tune_check.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/rule_json.hpp"
#include "cli/simulator_options.hpp"
#include "cli/tune_plan_text.hpp"
#include "common/byte_size.hpp"
#include "common/host_name.hpp"
#include "common/input_error.hpp"
#include "common/process_launcher.hpp"
#include "common/run_lock.hpp"
#include "common/text.hpp"
#include "profiles/store.hpp"
#include "report/report_html.hpp"
#include "report/table_format.hpp"
#include "runners/process_group.hpp"
#include "topology/reader.hpp"

namespace autotune::cli {
namespace {

// split()'s parts are views of the option's text; the request keeps its own copies.
std::vector<std::string> owned(const std::vector<std::string_view>& parts) {
  return {parts.begin(), parts.end()};
}

int parse_int(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    int v = std::stoi(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw InputError("<arguments>", 0, what + ": expected a whole number, found '" + text + "'");
}

std::string format_candidate(const profiles::Rule& r) {
  std::string s = std::string(nccl::name(r.algorithm)) + "/" + std::string(nccl::name(r.protocol));
  if (r.channels > 0) s += "/ch" + std::to_string(r.channels);
  return s;
}

nlohmann::json summary_json(const calibrate::TuneResult& r, const std::string& path) {
  using nlohmann::json;
  json j;
  j["profile"] = path;
  j["source"] = r.header.source;
  j["strategy"] = r.header.strategy;
  j["measured"] = r.measured;
  j["replayed"] = r.replayed;
  j["shared"] = r.shared;
  j["planned"] = r.plan.measurements;
  j["env"] = r.profile.env;
  j["rules"] = json::array();
  for (const auto& d : r.derivation.rules) {
    json rule = rule_json(d.rule);
    rule["shape"] = runners::shape_text(d.scale);
    rule["nodes"] = d.scale.nodes;
    rule["ranks"] = d.scale.ranks;
    j["rules"].push_back(rule);
  }
  j["failed_candidates"] = json::array();
  for (const auto& f : r.derivation.failed)
    j["failed_candidates"].push_back({{"setting", f.setting},
                                      {"nodes", f.scale.nodes},
                                      {"collective", nccl::name(f.collective)},
                                      {"candidate", runners::to_string(f.candidate)},
                                      {"outcome", runners::name(f.outcome)},
                                      {"detail", f.detail},
                                      {"sizes", f.sizes.size()}});
  j["jobs"] = json::array();
  for (const auto& job : r.jobs)
    j["jobs"].push_back({{"setting", job.setting.id},
                         {"nodes", job.scale.nodes},
                         {"ranks", job.scale.ranks},
                         {"measured", job.measured},
                         {"replayed", job.replayed},
                         {"failed", job.failed},
                         {"detail", job.detail},
                         {"skipped", job.skipped},
                         {"given_up", job.given_up}});
  j["point_to_point"] = r.point_to_point;
  j["slow_groups"] = r.slow_groups;
  j["notes"] = r.derivation.notes;
  return j;
}

// "45 / 45": timed repetitions of the rule's choice and of NCCL's default behind it.
std::string samples_text(const profiles::Rule& r) {
  if (!r.samples) return "-";
  return std::to_string(*r.samples) + (r.gain ? " / " + std::to_string(r.gain->default_samples) : "");
}

void print_summary(const calibrate::TuneResult& r, const std::string& path) {
  std::cout << "profile: " << path << " (source = \"" << r.header.source << "\")\n";
  std::cout << "measurements: " << r.measured << " made, " << r.replayed << " from the journal\n";
  if (r.shared)
    std::cout << "shared: " << r.shared
              << " measurements of one-node shapes count for a network setting too\n";
  std::cout << "\n";
  if (r.derivation.rules.empty()) {
    std::cout << "no rules: NCCL's own choice was as good as any candidate everywhere\n";
  } else {
    report::TextTable t({"collective", "shape", "sizes", "algo/proto", "busbw", "default", "gain", "interval",
                         "sizes measured", "samples"},
                        {report::Align::left, report::Align::right, report::Align::left, report::Align::left,
                         report::Align::right, report::Align::right, report::Align::right,
                         report::Align::right, report::Align::right, report::Align::right});
    for (const auto& d : r.derivation.rules)
      t.add_row({std::string(nccl::name(d.rule.collective)), runners::shape_text(d.scale),
                 report::human_size_range(d.rule.min_bytes, d.rule.max_bytes), format_candidate(d.rule),
                 report::format_gbps(d.rule.busbw_gbps.value_or(0)),
                 report::format_gbps(d.rule.default_busbw_gbps.value_or(0)), report::format_rule_gain(d.rule),
                 report::format_gain_interval(d.rule), std::to_string(d.measured_sizes),
                 samples_text(d.rule)});
    std::cout << t.render();
    std::cout << "(gain = NCCL's default time / the rule's time - 1: the geometric mean over the measured "
                 "sizes; busbw at the largest)\n";
  }
  if (!r.point_to_point.empty()) {
    std::cout << "\npoint-to-point (NCCL's default at every size; NCCL asks no tuner for these):\n";
    for (const auto& line : r.point_to_point) std::cout << "  " << line << "\n";
  }
  if (!r.slow_groups.empty()) {
    std::cout << "\nslow groups (against the shape's median group; `nccl-autotune check --journal` names "
                 "their nodes):\n";
    for (const auto& line : r.slow_groups) std::cout << "  " << line << "\n";
  }
  std::cout << "\n[env]: ";
  if (r.profile.env.empty()) std::cout << "none (NCCL's defaults)\n";
  for (const auto& [k, v] : r.profile.env) std::cout << k << "=" << v << " ";
  if (!r.profile.env.empty()) std::cout << "\n";
  for (const auto& n : r.derivation.notes) std::cout << "note: " << n << "\n";
  for (const auto& f : r.derivation.failed)
    std::cout << "failed candidate: " << nccl::name(f.collective) << " " << runners::to_string(f.candidate)
              << " under '" << f.setting << "' at " << runners::describe_shape(f.scale) << ": "
              << runners::name(f.outcome) << " at " << f.sizes.size() << " size(s)"
              << (f.detail.empty() ? "" : ": " + f.detail) << "\n";
  for (const auto& job : r.jobs) {
    if (job.failed)
      std::cout << "failed job '" << job.setting.id << "' at " << runners::describe_shape(job.scale) << ": "
                << job.detail << "\n";
    for (const auto& s : job.skipped) std::cout << "not measured: " << s << "\n";
    for (const auto& s : job.given_up) std::cout << "in doubt: " << s << "\n";
  }
}

// The measurement options as given, for the workers: what only the orchestrator acts on is left out.
std::vector<std::string> worker_args(const Args& args) {
  static const std::set<std::string> with_value = {"--launcher", "--format", "--store", "--budget",
                                                   "--from-journal"};
  static const std::set<std::string> flags = {"--resume", "--dry-run"};
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string name = a.substr(0, a.find('='));
    if (flags.count(a)) continue;
    if (with_value.count(name)) {
      if (name == a) ++i;  // the value is the next word
      continue;
    }
    out.push_back(a);
  }
  return out;
}

void print_job_notice(const calibrate::JobNotice& n) {
  std::fprintf(stderr, "job %d/%d '%s': %s\n", n.job + 1, n.jobs_total, n.setting.c_str(), n.what.c_str());
}

// Progress on stderr: one line rewritten in place on a terminal, a `progress {...}` line otherwise (batch
// logs; the orchestrator reads its workers' from their logs).
calibrate::ProgressFn progress_printer(bool tty) {
  calibrate::ProgressReporterOptions o;
  o.tty = tty;
  o.write = [](const std::string& text) {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  };
  return calibrate::progress_reporter(std::move(o));
}

// A worker says how its one job went; the orchestrator reads its exit status and journal part.
int worker_summary(const calibrate::TuneResult& r, bool root) {
  const bool failed = std::any_of(r.jobs.begin(), r.jobs.end(), [](const auto& j) { return j.failed; });
  if (root) {
    std::cout << "job '" << (r.jobs.empty() ? "" : r.jobs.front().setting.id) << "': " << r.measured
              << " measured, " << r.replayed << " from the part, " << (failed ? "failed" : "finished")
              << "\n";
    for (const auto& j : r.jobs)
      if (j.failed) std::cout << "failed at " << runners::describe_shape(j.scale) << ": " << j.detail << "\n";
  }
  return failed ? kExitFailed : kExitOk;
}

}  // namespace

namespace {

// The options as typed; tune_request() turns them into values.
struct TuneArgs {
  std::string collectives, min_bytes = "8", max_bytes = "8G", strategy = "adaptive", budget, min_gain = "3%",
                           scales, shapes, parallelism, store_dir, format = "text", from_journal, channels,
                           ib_hca, cross_nic, p2p_env, name, launcher, journal_part, report, excluded_nodes,
                           check_bytes = "256M", predict = "auto", concurrent = "auto", group_scale,
                           group_nodes;
  int job_id = -1, reps = 5;
  double watchdog_scale = 1.0;
  SimulatorArgs simulator;
};

void describe_tune(CommandSpec& spec, TuneArgs& a) {
  spec.usage =
      "nccl-autotune tune " + std::string(kSimulatorUsage) +
      " [--exclude-unhealthy | --ignore-health] [--check-bytes 256M] [--add-shapes] [--collectives LIST] "
      "[--min-bytes 8] [--max-bytes 8G] [--strategy adaptive|exhaustive] [--budget 20m] [--min-gain 3%] "
      "[--predict off|auto] [--concurrent auto|off] "
      "[--shapes 4x8,4x1:alltoall | --parallelism tp=2,ep=8,pp=2 | --scales 1,2,all] [--launcher \"srun -N "
      "2\"] "
      "[--resume] [--dry-run] [--from-journal FILE] [--store "
      "DIR] "
      "[--format text|json]";
  spec.description =
      "Calibrates the cluster: measures NCCL's algorithm/protocol candidates against NCCL's own choice over "
      "a "
      "size range, journals every measurement next to the profile, and writes a profile whose rules override "
      "NCCL only where the gain is real. --simulate runs against the labelled simulator (profile source = "
      "\"simulated\"). Each process-wide setting is measured by a job of worker processes of its own, "
      "started "
      "directly, through --launcher, or through srun inside a Slurm allocation. Started under mpirun/srun "
      "itself, it measures with the process-wide settings it was given.";
  add_simulator_options(spec.options, a.simulator, "measure the labelled simulator instead of GPUs");
  spec.options.add_options()("exclude-unhealthy",
                             "calibrate without the nodes check finds blocking (recorded in the profile)")(
      "ignore-health", "calibrate without checking the nodes first (recorded in the profile)")(
      "add-shapes", "keep the current profile's rules of shapes not calibrated now (profile merge's rules)")(
      "check-bytes", po::value(&a.check_bytes)->default_value(a.check_bytes),
      "the all-reduce size of the health check's passes (check --bytes)")(
      "collectives", po::value(&a.collectives), "comma list (default: all five)")(
      "min-bytes", po::value(&a.min_bytes)->default_value(a.min_bytes), "smallest size (8, 64K, 1M)")(
      "max-bytes", po::value(&a.max_bytes)->default_value(a.max_bytes), "largest size")(
      "channels", po::value(&a.channels), "comma list of channel counts to try (default: NCCL decides)")(
      "shapes", po::value(&a.shapes),
      "communicator shapes to calibrate, nodes x ranks per node, each optionally with its operations: "
      "4x8,4x1:alltoall,2x8:allreduce+allgather (default: the whole job, one node, one rank per node across "
      "all nodes, and the powers of two between)")(
      "parallelism", po::value(&a.parallelism),
      "the communicators a job of this layout creates, each kind measured with the operations it runs: "
      "tp=8,cp=2,ep=4,dp=4,pp=2 (Megatron-Core's order; dp defaults to the ranks left over), hsdp=8 or fsdp")(
      "scales", po::value(&a.scales), "whole nodes at these node counts: 1,2,4,all")(
      "ib-hca", po::value(&a.ib_hca), "NCCL_IB_HCA values to try, separated by ';' (default: the probe's)")(
      "cross-nic", po::value(&a.cross_nic), "NCCL_CROSS_NIC values to try: 0,1 (default: the probe's)")(
      "p2p-env", po::value(&a.p2p_env),
      "point-to-point settings to try where send/recv or all-to-all crosses nodes, a job each: "
      "NAME=VALUE[+NAME=VALUE],... or none (default: NCCL_P2P_NET_CHUNKSIZE=524288, "
      "NCCL_NCHANNELS_PER_NET_PEER=4, NCCL_PXN_DISABLE=1)")(
      "strategy", po::value(&a.strategy)->default_value(a.strategy), "adaptive or exhaustive")(
      "reps", po::value(&a.reps)->default_value(a.reps), "timed repetitions per measurement")(
      "watchdog-scale", po::value(&a.watchdog_scale)->default_value(1.0),
      "multiplies how long an operation may take before it is declared hung (slow fabrics, tests)")(
      "budget", po::value(&a.budget), "time for the measurements: 20m, 90s, 1h")(
      "min-gain", po::value(&a.min_gain)->default_value(a.min_gain),
      "a rule must beat NCCL's default by this")(
      "concurrent", po::value(&a.concurrent)->default_value(a.concurrent),
      "auto: scales smaller than the allocation run side by side on disjoint nodes, a worker each, in rounds "
      "(simulated calibrations; the plan shows the rounds); off: every scale in turn")(
      "predict", po::value(&a.predict)->default_value(a.predict),
      "auto: scales above 64 nodes, with two smaller multi-node scales of the same ranks per node measured "
      "first, are predicted from NCCL's cost model fitted to those and confirmed by measuring around the "
      "predicted crossovers (a miss measures the scale in full); off: measure every scale in full")(
      "resume", "continue the journal of an interrupted calibration")(
      "dry-run", "print the plan and the estimated time; measure nothing")(
      "from-journal", po::value(&a.from_journal), "re-derive the profile from a journal, measuring nothing")(
      "store", po::value(&a.store_dir),
      "profile store directory (default: $NCCL_AUTOTUNE_STORE, XDG data dir)")(
      "name", po::value(&a.name), "cluster name for the profile (default: from the node and node count)")(
      "format", po::value(&a.format)->default_value(a.format),
      "text or json (the final summary, or the plan with --dry-run)")(
      "report", po::value(&a.report), "also write the HTML report of this calibration to FILE")(
      "launcher", po::value(&a.launcher),
      "start each job through this command: \"srun -N 2 --ntasks-per-node 8\", \"mpirun -np 16 -H a:8,b:8\"")(
      "worker", "internal: measure one job (--job-id) into a journal part (--journal-part)")(
      "job-id", po::value(&a.job_id), "internal: the job's index among the process-wide settings")(
      "journal-part", po::value(&a.journal_part), "internal: where the worker writes its journal part")(
      "excluded-nodes", po::value(&a.excluded_nodes),
      "internal: the simulated nodes the orchestrator left out")(
      "group-scale", po::value(&a.group_scale),
      "internal: the one scale a concurrent group's worker measures")(
      "group-nodes", po::value(&a.group_nodes),
      "internal: the allocation's nodes a concurrent group runs on");
}

calibrate::CalibrationRequest tune_request(const TuneArgs& a, const po::variables_map& vm, const Args& args) {
  calibrate::CalibrationRequest r;
  SimulatorArgs simulator = a.simulator;
  if (!vm.count("simulate")) {  // without the simulator, --nodes and --topology describe the plan (--dry-run)
    if (!vm["nodes"].defaulted()) r.plan_nodes = simulator.nodes;
    r.plan_topology = simulator.topology_file;
    simulator.nodes = 1;
    simulator.topology_file.clear();
  }
  const std::optional<sim::SimulatorSpec> simulated = simulator_spec(vm, simulator);
  r.simulate = simulated.has_value();
  if (simulated) r.simulator = *simulated;
  r.ignore_health = vm.count("ignore-health") > 0;
  r.exclude_unhealthy = vm.count("exclude-unhealthy") > 0;
  r.check_bytes = require_byte_size(a.check_bytes, "--check-bytes");
  r.add_shapes = vm.count("add-shapes") > 0;
  if (!a.excluded_nodes.empty())
    for (const auto& item : split(a.excluded_nodes, ','))
      r.excluded_nodes.push_back(parse_int(std::string(item), "--excluded-nodes"));
  if (vm.count("collectives")) r.collectives = parse_collective_list(a.collectives, "--collectives");
  r.min_bytes = require_byte_size(a.min_bytes, "--min-bytes");
  r.max_bytes = require_byte_size(a.max_bytes, "--max-bytes");
  if (!a.channels.empty())
    for (const auto& item : split(a.channels, ','))
      r.channels.push_back(parse_int(std::string(item), "--channels"));
  const int named = !a.shapes.empty() + !a.parallelism.empty() + !a.scales.empty();
  if (named > 1)
    throw InputError("<arguments>", 0,
                     "expected one of --shapes, --parallelism and --scales, found " + std::to_string(named));
  if (!a.shapes.empty()) r.shapes = calibrate::parse_shapes(a.shapes);
  if (!a.parallelism.empty()) r.parallelism = calibrate::parse_parallelism(a.parallelism);
  if (!a.scales.empty())
    for (const auto& item : split(a.scales, ','))
      r.scales.push_back(item == "all" ? std::nullopt
                                       : std::optional<int>(parse_int(std::string(item), "--scales")));
  if (!a.ib_hca.empty()) r.ib_hca = owned(split(a.ib_hca, ';'));
  if (!a.cross_nic.empty()) r.cross_nic = owned(split(a.cross_nic, ','));
  if (!a.p2p_env.empty()) r.p2p_env = calibrate::parse_p2p_env(a.p2p_env);
  r.strategy = a.strategy;
  r.repetitions = a.reps;
  r.watchdog_scale = require_watchdog_scale(a.watchdog_scale);
  r.min_gain = parse_gain(a.min_gain, "--min-gain");
  r.predict = calibrate::parse_predict_mode(a.predict);
  if (vm.count("budget")) r.budget = std::chrono::duration<double>(parse_duration(a.budget, "--budget"));
  r.resume = vm.count("resume") > 0;
  r.name = a.name;
  if (!r.name.empty()) profiles::check_cluster_name(r.name, "--name");
  if (!a.store_dir.empty()) profiles::check_store_dir(a.store_dir);
  r.command = "nccl-autotune tune";
  for (const auto& word : args) r.command += " " + word;
  r.launcher = a.launcher;
  r.dry_run = vm.count("dry-run") > 0;
  if (vm.count("worker")) r.worker_job = a.job_id;
  r.journal_part = a.journal_part;
  if (a.concurrent != "auto" && a.concurrent != "off")
    throw InputError("<arguments>", 0, "--concurrent: expected auto or off, found '" + a.concurrent + "'");
  r.concurrent = a.concurrent == "auto";
  if (!a.group_scale.empty()) {
    const auto shapes = calibrate::parse_shapes(a.group_scale, "--group-scale");
    if (shapes.size() != 1) throw InputError("<arguments>", 0, "--group-scale: expected one shape NxR");
    r.group_scale = shapes.front().shape;
  }
  r.group_nodes = a.group_nodes;
  return r;
}

calibrate::CalibrationContext tune_context(const runners::ProcessGroup& processes,
                                           const profiles::Store& store, const Args& args) {
  calibrate::CalibrationContext c;
  c.processes = &processes;
  c.under_mpi = runners::launched_by_mpi();
  c.env = environment_map();
  c.hostname = host_name();
  c.store = store.dir();
  c.exe = std::filesystem::read_symlink("/proc/self/exe");
  c.worker_args = worker_args(args);
  c.nccl_version_code = kBuiltNcclVersion;
  c.tool_version = kToolVersion;
  c.probe_node = [] { return topology::probe_live(); };
  // Health first: check's passes on the simulator or this job, or check as a job of its own.
  const bool tty = processes.is_root() && ::isatty(STDERR_FILENO);
  c.check_health = [tty, root = processes.is_root()](const calibrate::HealthCheckRequest& request) {
    if (root) std::fprintf(stderr, "health: checking the nodes before calibrating (nccl-autotune check)\n");
    auto progress = [tty, root](const check::CheckProgress& p) {
      if (!root) return;
      std::fprintf(stderr, "%shealth: %d/%d passes (%s)%s", tty ? "\r\033[K" : "", p.done, p.total,
                   p.pass.c_str(), tty ? "" : "\n");
      if (tty && p.done == p.total) std::fprintf(stderr, "\r\033[K");
    };
    return calibrate::check_before_tune(request, nullptr, progress);
  };
  return c;
}

}  // namespace

int cmd_tune(const Args& args) {
  CommandSpec spec;
  TuneArgs a;
  describe_tune(spec, a);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (a.format != "text" && a.format != "json")
    throw InputError("<arguments>", 0, "--format: expected text or json, found '" + a.format + "'");
  profiles::Store store(a.store_dir.empty() ? profiles::Store::default_dir()
                                            : std::filesystem::path(a.store_dir));
  auto finish = [&](const calibrate::TuneResult& r, const std::filesystem::path& journal) {
    for (const auto& line : r.journal_skipped) std::fprintf(stderr, "warning: %s\n", line.c_str());
    std::string path = store.save(r.profile).string();
    if (!a.report.empty()) {
      report::write_report(a.report, search::load_journal(journal), r.profile);
      std::fprintf(stderr, "report: %s\n", a.report.c_str());
    }
    if (a.format == "json")
      std::cout << summary_json(r, path).dump(2) << "\n";
    else
      print_summary(r, path);
    return kExitOk;
  };
  if (!a.from_journal.empty() && vm->count("add-shapes"))
    throw InputError("<arguments>", 0, "expected --add-shapes with a calibration, not with --from-journal");
  if (!a.from_journal.empty()) {
    const auto r = calibrate::tune_from_journal(a.from_journal, {parse_gain(a.min_gain, "--min-gain")});
    // It publishes under the calibration's name: not while a calibration of that name runs.
    const RunLock lock = search::lock_journal(
        store.journal_path_for(r.profile.cluster.name, r.profile.provenance.nccl_version),
        "a re-derivation (--from-journal) of " + r.profile.cluster.name);
    return finish(r, a.from_journal);
  }

  const calibrate::CalibrationRequest request = tune_request(a, *vm, args);
  const auto& processes = runners::job_processes();
  calibrate::CalibrationSetup setup =
      calibrate::set_up_calibration(request, tune_context(processes, store, args));
  if (request.dry_run) {
    if (processes.is_root())
      std::cout << (a.format == "json" ? plan_json(setup).dump(2) + "\n" : plan_text(setup));
    return kExitOk;
  }
  // One calibration per store and name: a second refuses before it touches the journal (a worker runs
  // under its orchestrator's lock).
  std::optional<RunLock> lock;
  if (processes.is_root() && setup.mode != calibrate::CalibrationMode::worker)
    lock = search::lock_journal(setup.tune.journal, "a calibration of " + setup.tune.header.cluster);
  if (processes.is_root())
    setup.tune.say = [](const std::string& line) { std::fprintf(stderr, "tune: %s\n", line.c_str()); };
  if (setup.mode == calibrate::CalibrationMode::orchestrator) {
    std::fprintf(stderr, "%zu job(s), one per process-wide setting; jobs run: %s\n",
                 setup.orchestration.settings.size(), calibrate::describe(setup.launcher).c_str());
    return finish(calibrate::run_calibration(setup, {}, print_job_notice), setup.tune.journal);
  }
  const bool tty = processes.is_root() && ::isatty(STDERR_FILENO);
  auto result = calibrate::run_calibration(
      setup, processes.is_root() ? progress_printer(tty) : calibrate::ProgressFn{});
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (setup.mode == calibrate::CalibrationMode::worker) return worker_summary(result, processes.is_root());
  if (!processes.is_root()) return kExitOk;
  return finish(result, setup.tune.journal);
}

}  // namespace autotune::cli
