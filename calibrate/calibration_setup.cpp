#include "calibrate/calibration_setup.hpp"

#include "calibrate/p2p_candidates.hpp"

#include <algorithm>
#include <set>

#include "calibrate/concurrent_scales.hpp"
#include "calibrate/group_launcher.hpp"
#include "calibrate/plan_world.hpp"
#include "calibrate/shape_plan.hpp"
#include "common/input_error.hpp"
#include "nccl/ib_hca_spec.hpp"
#include "nccl/version.hpp"
#include "profiles/store.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_fault.hpp"
#include "topology/analysis.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/reader.hpp"

namespace autotune::calibrate {
namespace {

using runners::ProcessSetting;

[[noreturn]] void bad_argument(const std::string& what) {
  throw InputError("<arguments>", 0, what);
}

// The orchestrator's words to a concurrent group's worker: only with --worker, both given, the nodes a range
// "FIRST-LAST" (or one node) as many as the scale's.
void check_group_request(const CalibrationRequest& r) {
  if (!r.group_scale && r.group_nodes.empty()) return;
  if (!r.worker_job || !r.group_scale || r.group_nodes.empty())
    bad_argument(
        "--group-scale and --group-nodes: expected both, and only with --worker (the orchestrator "
        "gives them to a concurrent group's worker)");
  const std::string& text = r.group_nodes;
  const std::optional<search::NodeSpan> span = search::parse_node_range(text);
  if (!span) bad_argument("--group-nodes: expected FIRST-LAST node numbers, found '" + text + "'");
  if (span->count != r.group_scale->nodes)
    bad_argument("--group-nodes: expected " + std::to_string(r.group_scale->nodes) + " node(s) for " +
                 runners::shape_text(*r.group_scale) + ", found '" + text + "'");
}

// Every value a request carries, checked before anything is set up or measured: a bad one found after
// minutes of measuring costs the minutes.
void check_request(const CalibrationRequest& r) {
  if (r.repetitions < 1 || r.repetitions > 10000)
    bad_argument("--reps: expected 1 to 10000 timed repetitions per measurement, found " +
                 std::to_string(r.repetitions));
  sim::check_simulator_spec(r.simulate, r.simulator);
  for (int ch : r.channels)
    if (ch < 1 || ch > nccl::kMaxChannels)
      bad_argument("--channels: expected channel counts from 1 to " + std::to_string(nccl::kMaxChannels) +
                   " (NCCL's most), found " + std::to_string(ch));
  if (r.cross_nic)
    for (const auto& v : *r.cross_nic)
      if (v != "0" && v != "1" && v != "2")
        bad_argument("--cross-nic: expected values of NCCL_CROSS_NIC, 0, 1 or 2, found '" + v + "'");
  if (r.ib_hca)
    for (const auto& v : *r.ib_hca) try {
        nccl::parse_ib_hca_spec(v);
      } catch (const InputError& e) {
        bad_argument("--ib-hca: the value '" + v + "': " + e.message());
      }
  for (const auto& n : r.scales)
    if (n && *n < 1)
      bad_argument("--scales: expected node counts of at least 1 or all, found " + std::to_string(*n));
  if (r.min_bytes < 1 || r.min_bytes > r.max_bytes)
    bad_argument("expected 0 < --min-bytes <= --max-bytes, found " + std::to_string(r.min_bytes) + " and " +
                 std::to_string(r.max_bytes));
  if (!(r.min_gain >= 0.0))
    bad_argument("--min-gain: expected a gain of at least 0, found " + std::to_string(r.min_gain));
  if (r.budget && !(r.budget->count() > 0.0)) bad_argument("--budget: expected a positive duration");
  if (!r.simulate && !r.dry_run && (r.plan_nodes || !r.plan_topology.empty()))
    bad_argument("--nodes and --topology describe the simulator or the plan: add --simulate or --dry-run");
  search::make_strategy(r.strategy);  // throws for a name it does not know
  check_group_request(r);
}

// The simulated node, and the stem its cluster is named after; nothing on GPUs (what mpirun started is the
// cluster).
std::optional<topology::Topology> load_node(const CalibrationRequest& r, std::string* stem) {
  if (!r.simulate) return std::nullopt;
  std::vector<int> seen;
  for (int n : r.excluded_nodes) {
    if (n < 0 || n >= r.simulator.nodes || std::find(seen.begin(), seen.end(), n) != seen.end() ||
        static_cast<int>(r.excluded_nodes.size()) >= r.simulator.nodes)
      throw InputError("<arguments>", 0,
                       "--excluded-nodes: expected distinct nodes below --nodes " +
                           std::to_string(r.simulator.nodes) + ", leaving at least one; found " +
                           std::to_string(n));
    seen.push_back(n);
  }
  return sim::simulated_node(r.simulator, stem);
}

// Orchestrate: one job per process-wide setting, each a fresh set of processes. The simulator models the
// settings in process, so it orchestrates only when asked to (--launcher), to test the plumbing.
CalibrationMode choose_mode(const CalibrationRequest& r, const CalibrationContext& c) {
  if (r.worker_job) {
    if (*r.worker_job < 0 || r.journal_part.empty())
      throw InputError("<arguments>", 0,
                       "--worker: expected --job-id N and --journal-part PATH, found not both");
    return CalibrationMode::worker;
  }
  if (c.under_mpi && !r.launcher.empty())
    throw InputError("<arguments>", 0, "--launcher: this process was itself started under mpirun/srun");
  if (!c.under_mpi && (!r.launcher.empty() || !r.simulate)) return CalibrationMode::orchestrator;
  return CalibrationMode::in_process;
}

// The simulated job without the excluded nodes: fewer nodes, the faults of the others renumbered.
void drop_simulated_nodes(CalibrationRequest& r, const std::vector<int>& excluded) {
  std::vector<sim::SimFault> kept;
  for (auto f : r.simulator.faults) {
    if (f.kind == sim::SimFault::Kind::spine) {  // no node of its own
      kept.push_back(f);
      continue;
    }
    if (std::find(excluded.begin(), excluded.end(), f.node) != excluded.end()) continue;
    f.node -=
        static_cast<int>(std::count_if(excluded.begin(), excluded.end(), [&](int n) { return n < f.node; }));
    kept.push_back(f);
  }
  r.simulator.faults = std::move(kept);
  r.simulator.nodes -= static_cast<int>(excluded.size());
}

// srun's node count in the launcher's words, lowered by `fewer` where it is given (-N 8, -N8, --nodes 8,
// --nodes=8); a range (-N 4-8) is left alone.
void lower_srun_nodes(std::vector<std::string>& words, int fewer) {
  auto lowered = [&](const std::string& text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return text;
    return std::to_string(std::max(1, std::stoi(text) - fewer));
  };
  for (size_t i = 1; i < words.size(); ++i) {
    std::string& w = words[i];
    if ((w == "-N" || w == "--nodes") && i + 1 < words.size()) {
      words[i + 1] = lowered(words[i + 1]);
    } else if (w.rfind("--nodes=", 0) == 0) {
      w = "--nodes=" + lowered(w.substr(8));
    } else if (w.rfind("-N", 0) == 0 && w.size() > 2) {
      w = "-N" + lowered(w.substr(2));
    }
  }
}

// Leaves the excluded nodes out of every job the launcher starts: srun takes --exclude (and one node fewer
// per node left out); other launchers cannot be told, so the request is refused with what to do.
void exclude_from_launcher(Launcher& l, const std::vector<std::string>& hosts) {
  std::string list;
  for (const auto& h : hosts) list += (list.empty() ? "" : ",") + h;
  const bool srun = !l.words.empty() && std::filesystem::path(l.words.front()).filename() == "srun";
  if (!srun || list.empty() || std::find(hosts.begin(), hosts.end(), "") != hosts.end())
    throw InputError("<arguments>", 0,
                     "--exclude-unhealthy: expected a launcher that can leave nodes out (srun); found " +
                         describe(l) + ": start the jobs without " +
                         (list.empty() ? "the blocking nodes" : list) + " yourself");
  lower_srun_nodes(l.words, static_cast<int>(hosts.size()));
  l.words.insert(l.words.begin() + 1, "--exclude=" + list);
  l.origin += " without the blocking nodes";
}

// Checks the nodes (CalibrationContext::check_health) and applies what the gate decided: the request to
// calibrate, without the excluded nodes where the simulator or the launcher can leave them out.
CalibrationRequest gate_on_health(const CalibrationRequest& given, const CalibrationContext& c,
                                  const std::optional<topology::Topology>& node, CalibrationSetup& s,
                                  check::ClusterHealth& seen) {
  CalibrationRequest r = given;
  if (s.mode == CalibrationMode::worker) {  // the orchestrator checked; a simulated worker drops what it did
    if (r.simulate) drop_simulated_nodes(r, r.excluded_nodes);
    return r;
  }
  if (r.ignore_health && r.exclude_unhealthy)
    throw InputError("<arguments>", 0, "expected one of --ignore-health and --exclude-unhealthy, found both");
  if (r.dry_run || r.ignore_health) {
    s.health.summary = r.dry_run ? "" : "not checked (--ignore-health)";
    s.notes.push_back(r.dry_run ? "health not checked (--dry-run)" : "health not checked (--ignore-health)");
    return r;
  }
  if (!c.check_health) return r;  // a context without the check (tests of everything else)
  HealthCheckRequest q;
  q.mode = s.mode;
  if (r.simulate) q.runner = measure::simulated_runner_options(r.simulator, node);
  q.runner.watchdog_scale = r.watchdog_scale;  // the health pass's bound is the measurements' bound
  q.launcher = s.launcher;
  q.exe = c.exe;
  q.work_dir = c.store;
  q.processes = c.processes;
  q.bytes = r.check_bytes;
  seen = c.check_health(q);
  s.health = check::decide_on_health(seen, {r.ignore_health, r.exclude_unhealthy});
  s.notes.insert(s.notes.end(), s.health.notes.begin(), s.health.notes.end());
  if (s.health.excluded.empty()) return r;
  r.excluded_nodes = s.health.excluded;
  if (r.simulate) {
    drop_simulated_nodes(r, s.health.excluded);
  } else if (s.mode == CalibrationMode::orchestrator) {
    std::vector<std::string> hosts;
    for (int n : s.health.excluded) hosts.push_back(seen.nodes.at(static_cast<size_t>(n)).host);
    exclude_from_launcher(s.launcher, hosts);
  } else {
    throw InputError("<arguments>", 0,
                     "--exclude-unhealthy: expected to start the jobs itself; this process was started under "
                     "mpirun/srun, whose nodes are given: start it again without the blocking nodes (srun "
                     "--exclude=...), or start tune without mpirun/srun");
  }
  return r;
}

// The host of every node the calibration measures, in its node order (the gate's, without the nodes it left
// out), so that what the journal says of node n (a straggler, calibrate/spread_findings.hpp) names a host;
// empty unless the gate named every host.
std::vector<std::string> calibrated_hosts(const check::ClusterHealth& seen,
                                          const std::vector<int>& excluded) {
  std::vector<std::string> hosts;
  for (const auto& n : seen.nodes) {
    if (n.host.empty()) return {};
    if (std::find(excluded.begin(), excluded.end(), n.node) == excluded.end()) hosts.push_back(n.host);
  }
  return hosts;
}

TuneOptions tune_options(const CalibrationRequest& r) {
  TuneOptions o;
  o.strategy = r.strategy;
  o.repetitions = r.repetitions;
  o.min_gain = r.min_gain;
  o.predict = r.predict;
  o.resume = r.resume;
  o.budget = r.budget;
  o.space.collectives = r.collectives;
  o.space.min_bytes = r.min_bytes;
  o.space.max_bytes = r.max_bytes;
  o.space.channels = r.channels;
  return o;
}

// The communicators to calibrate on `world` (calibrate/shapes.hpp), each checked to fit, with the operations
// each runs (calibrate/shape_plan.hpp); what a parallel layout creates, and what a shape asked for with its
// operations gets, is said in the notes.
std::vector<ShapePlan> choose_shapes(const CalibrationRequest& r, const World& world,
                                     std::vector<std::string>& notes) {
  std::vector<ShapePlan> out;
  auto add = [&](const runners::Scale& s, const std::string& option) {
    check_shape(s, world, option);
    if (std::none_of(out.begin(), out.end(), [&](const ShapePlan& p) { return p.shape == s; }))
      out.push_back(plan_shape(s, {}, r.collectives));
  };
  if (!r.shapes.empty()) {
    for (const auto& s : r.shapes) {
      check_shape(s.shape, world, "--shapes");
      out.push_back(plan_shape(s.shape, s.operations, r.collectives));
      if (!s.operations.empty()) {
        const auto said = describe_plans({out.back()});
        notes.insert(notes.end(), said.begin(), said.end());
      }
    }
  } else if (r.parallelism) {
    const auto groups = layout_groups(*r.parallelism, world);
    for (const auto& g : groups) check_shape(shape_of(g), world, "--parallelism");
    out = plan_layout(groups, r.collectives);
    const auto said = describe_plans(out);
    notes.insert(notes.end(), said.begin(), said.end());
  } else if (!r.scales.empty()) {
    for (const auto& item : r.scales) {
      const int n = item.value_or(world.nodes);
      if (n < 1 || n > world.nodes)
        throw InputError("<arguments>", 0,
                         "--scales: expected node counts from 1 to " + std::to_string(world.nodes) +
                             ", found " + std::to_string(n));
      add({n, n * world.gpus_per_node}, "--scales");
    }
  } else {
    for (const auto& s : default_shapes(world)) add(s, "shapes");
  }
  if (out.empty())
    throw InputError("<arguments>", 0,
                     "expected a communicator of at least two ranks to calibrate, found none");
  if (std::none_of(out.begin(), out.end(), [](const ShapePlan& p) { return !p.collectives.empty(); }))
    throw InputError("<arguments>", 0,
                     "expected a collective on some shape (the rules, and the baseline a point-to-point "
                     "setting must not slow, come from collectives), found only point-to-point operations or "
                     "none that --collectives names; bench -c alltoall,sendrecv measures those alone");
  return out;
}

// The shapes chosen become the search's scales, and a layout's groups the journal's and the profile's.
void take_shapes(const CalibrationRequest& r, const World& world, CalibrationSetup& s) {
  const std::vector<ShapePlan> plans = choose_shapes(r, world, s.notes);
  apply_plans(plans, s.tune.space);
  s.shapes = plans;
  if (!r.parallelism) return;
  profiles::JobLayout layout{r.parallelism->text, {}};
  for (const auto& p : plans) layout.groups.insert(layout.groups.end(), p.kinds.begin(), p.kinds.end());
  s.tune.header.layout = layout;
}

void add_settings(std::vector<runners::ProcessSetting>& out, const std::vector<std::string>& hcas,
                  const std::vector<std::string>& cross) {
  for (const auto& h : hcas) out.push_back({"ib_hca=" + h, {{"NCCL_IB_HCA", h}}});
  for (const auto& v : cross) out.push_back({"cross_nic=" + v, {{"NCCL_CROSS_NIC", v}}});
}

// The point-to-point settings, each a job of its own, where point-to-point traffic crosses nodes: every one
// of them acts only there (a one-node layout has nothing for them to change).
void add_p2p_settings(const CalibrationRequest& r, search::SearchSpaceOptions& space,
                      std::vector<std::string>& notes) {
  if (!asks_point_to_point(r.shapes, r.parallelism)) return;
  if (r.simulate && r.simulator.nodes <= 1) {
    if (r.p2p_env)
      notes.push_back("one node: the point-to-point settings act between nodes and were not swept");
    return;
  }
  const auto sets = r.p2p_env.value_or(default_p2p_candidates());
  for (auto& setting : p2p_settings(sets)) space.settings.push_back(std::move(setting));
  if (!sets.empty())
    notes.push_back(
        std::to_string(sets.size()) +
        " point-to-point setting(s) swept, a job each: one joins [env] only where it beats NCCL's "
        "default for the point-to-point traffic beyond the noise and slows no collective measured "
        "under both beyond the noise");
}

// Process-wide settings: NCCL's defaults first, then the ones given or, on a simulated cluster with a
// network, the probe's suggestions. Also the algorithms the node can run.
void plan_settings(const CalibrationRequest& r, const std::optional<topology::Topology>& node,
                   search::SearchSpaceOptions& space, std::vector<std::string>& notes) {
  space.settings = {{"default", {}}};
  const std::vector<std::string> no_values;
  if (!r.simulate)
    add_settings(space.settings, r.ib_hca.value_or(no_values), r.cross_nic.value_or(no_values));
  add_p2p_settings(r, space, notes);
  if (!node) return;
  const auto analysis = topology::analyze(*node);
  if (!analysis.algorithms.empty())
    space.algorithms = std::set<nccl::Algorithm>(analysis.algorithms.begin(), analysis.algorithms.end());
  if (r.simulator.nodes <= 1) {
    if (r.ib_hca || r.cross_nic)
      notes.push_back("one node: NCCL_IB_HCA and NCCL_CROSS_NIC do not matter there and were not swept");
    return;
  }
  std::vector<std::string> hcas = r.ib_hca.value_or(analysis.ib_hca_candidates);
  // The most inclusive set is what NCCL uses by default: that is the default job.
  if (!r.ib_hca && !hcas.empty()) hcas.erase(hcas.begin());
  const std::vector<std::string> cross =
      r.cross_nic.value_or(analysis.sweep_cross_nic ? std::vector<std::string>{"0", "1"} : no_values);
  add_settings(space.settings, hcas, cross);
}

void select_settings(const CalibrationRequest& r, const CalibrationContext& c, CalibrationSetup& s) {
  auto& settings = s.tune.space.settings;
  if (!r.simulate && c.under_mpi && !r.worker_job) {
    // NCCL reads process-wide settings once per process: this process measures the ones it was started with.
    s.notes.push_back("process-wide settings were not swept (started under mpirun/srun)");
    settings = {{"default", {}}};
  }
  if (r.worker_job) {
    if (*r.worker_job >= static_cast<int>(settings.size()))
      throw InputError("<arguments>", 0,
                       "--job-id: expected 0 to " + std::to_string(settings.size() - 1) + ", found " +
                           std::to_string(*r.worker_job));
    const runners::ProcessSetting own = settings[*r.worker_job];
    s.one_node_shared = !(own == settings.front()) && !runners::reaches_one_node(own);
    settings = {own};
    s.runner.process_env = own.env;
  }
}

// A worker of one concurrent group measures its scale alone and journals the nodes it ran on; the plan keeps
// every scale, so that a predicted one is predicted from the records its part was seeded with.
void keep_group_scale(const CalibrationRequest& r, CalibrationSetup& s) {
  if (!r.group_scale) return;
  auto& scales = s.tune.space.scales;
  if (std::find(scales.begin(), scales.end(), *r.group_scale) == scales.end())
    throw InputError("<arguments>", 0,
                     "--group-scale: expected one of the calibration's shapes, found " +
                         runners::shape_text(*r.group_scale));
  s.tune.only_scale = r.group_scale;
  s.tune.nodes_used = r.group_nodes;
}

// A worker that shares the first job's one-node shapes leaves them out (unless nothing else is left).
void leave_out_shared_shapes(CalibrationSetup& s) {
  if (!s.one_node_shared) return;
  std::vector<runners::Scale> kept;
  for (const auto& scale : s.tune.space.scales)
    if (scale.nodes > 1) kept.push_back(scale);
  if (kept.empty()) {
    s.one_node_shared = false;
    return;
  }
  s.tune.space.scales = kept;
  s.notes.push_back("one-node shapes measured by the first job, counted for this one");
}

// The kind of node, for the NCCL the measurements run under: the fingerprint holds its major.minor.
void fingerprint_node(const topology::Topology& node, search::JournalHeader& h) {
  const auto v = nccl::Version::parse(h.nccl_version);
  h.fingerprint = topology::fingerprint(node, v ? v->major_minor() : 0);
  h.fingerprint_facts = topology::fingerprint_facts(node, v ? v->major_minor() : 0);
}

void fill_provenance(const CalibrationRequest& r, const CalibrationContext& c,
                     const std::optional<topology::Topology>& node, const std::string& stem,
                     search::JournalHeader& h) {
  h.tool_version = c.tool_version;
  h.source = r.simulate ? "simulated" : "measured";
  h.command = r.command;
  const auto built = nccl::Version::from_code(c.nccl_version_code);
  h.nccl_version = built ? built->text() : "";
  if (node) {
    fingerprint_node(*node, h);
    h.gpu_model = node->gpus.empty() ? "" : node->gpus[0].name;
    h.gpus_per_node = static_cast<int>(node->gpus.size());
    h.nics_per_node = static_cast<int>(node->nics.size());
  }
  h.nodes = r.simulate ? r.simulator.nodes : 1;
  h.seed = r.simulate ? r.simulator.seed : 0;
  h.cluster = !r.name.empty() ? r.name : (r.simulate ? simulated_cluster_name(stem, r.simulator.nodes) : "");
}

// On GPUs the cluster is what the launcher or mpirun gives: the orchestrator names it from the launcher's
// node count (the GPUs belong to the workers); in process the runner says what it runs on.
void name_gpu_cluster(const CalibrationRequest& r, const CalibrationContext& c, CalibrationSetup& s) {
  search::JournalHeader& h = s.tune.header;
  if (s.mode == CalibrationMode::orchestrator) {
    s.tune.space.scales = {{1, 1}};  // for the plan; the workers' parts say what was measured
    h.nodes = 0;
    if (h.cluster.empty()) {
      auto n = s.launcher.words.empty() ? std::optional<int>(1) : launcher_nodes(s.launcher.words);
      h.cluster = c.hostname + "-" + (n ? std::to_string(*n) + "n" : std::string("multi"));
    }
    return;
  }
  s.first_runner = c.make_runner(s.runner);
  const auto info = s.first_runner->info();
  if (!info.source.empty()) h.source = info.source;  // "standin" on the stand-in NCCL, never "measured"
  take_shapes(r, {info.nodes, info.gpus_per_node}, s);
  h.runner = info.description;
  h.nodes = info.nodes;
  h.gpus_per_node = info.gpus_per_node;
  h.gpu_model = info.gpu_model;
  if (!info.nccl_version.empty()) h.nccl_version = info.nccl_version;  // the libnccl this process loaded
  if (s.runner.topology) fingerprint_node(*s.runner.topology, h);
  if (h.cluster.empty()) h.cluster = c.hostname + "-" + std::to_string(info.nodes) + "n";
}

// A dry run on GPUs: the shapes of the cluster the launcher or this job would measure, from the probe and the
// node count (calibrate/plan_world.hpp), nothing started.
void plan_gpu_cluster(const CalibrationRequest& r, const CalibrationContext& c, CalibrationSetup& s) {
  PlanWorldInput in;
  in.nodes = r.plan_nodes;
  in.topology_file = r.plan_topology;
  in.probe = c.probe_node;
  in.launcher = s.launcher.words;
  in.orchestrator = s.mode == CalibrationMode::orchestrator;
  in.processes = c.processes;
  in.env = c.env;
  const PlanWorld planned = plan_world(in);
  take_shapes(r, planned.world, s);
  search::JournalHeader& h = s.tune.header;
  h.nodes = planned.world.nodes;
  h.gpus_per_node = planned.world.gpus_per_node;
  if (h.cluster.empty()) h.cluster = c.hostname + "-" + std::to_string(planned.world.nodes) + "n";
  s.notes.push_back("planned for " + std::to_string(planned.world.nodes) + " node(s) (" +
                    planned.node_origin + ") of " + std::to_string(planned.world.gpus_per_node) + " GPUs (" +
                    planned.gpu_origin + ")");
}

// The plan of the cluster the workers will run on: set-up's where it made one (simulated, a dry run), else
// on GPUs the one a dry run would make (the probe of this node and the launcher's node count,
// plan_world.hpp); nullopt with the reason when it cannot be told.
std::optional<TunePlan> orchestrated_plan(const CalibrationRequest& r, const CalibrationContext& c,
                                          const CalibrationSetup& s, int* nodes, std::string* why) {
  if (s.plan) {
    *nodes = s.tune.header.nodes;
    return s.plan;
  }
  CalibrationSetup scratch;
  scratch.mode = s.mode;
  scratch.launcher = s.launcher;
  scratch.tune = s.tune;
  try {
    plan_gpu_cluster(r, c, scratch);
  } catch (const std::exception& e) {  // no GPU here to probe, or a launcher that does not say its nodes
    *why = e.what();
    return std::nullopt;
  }
  *nodes = scratch.tune.header.nodes;
  return plan_tune(scratch.tune);
}

bool is_srun(const Launcher& l) {
  return !l.words.empty() && std::filesystem::path(l.words.front()).filename() == "srun";
}

// Whether every group of the rounds can be started on its own nodes.
bool narrowable(const Launcher& launcher, const std::vector<ConcurrentRound>& rounds) {
  for (const auto& round : rounds)
    for (const auto& g : round.groups)
      if (!launcher_for_group(launcher, g)) return false;
  return true;
}

std::string rounds_note(const std::vector<ConcurrentRound>& rounds, size_t i) {
  std::string groups;
  for (const auto& g : rounds[i].groups)
    groups += (groups.empty() ? "" : ", ") + runners::shape_text(g.scale) + " (" + node_range_text(g) + ")";
  return "side by side, sharing the fabric, round " + std::to_string(i + 1) + ": " + groups;
}

// The rounds whose scales run side by side (two or more groups; a round of one scale is left to the job's own
// worker). The predicted scales' rounds come after every scale measured in full: their groups' parts are
// seeded with those measurements, which their fit needs (calibrate/group_jobs.hpp). On GPUs only where the
// launcher can start a group on its own nodes (calibrate/group_launcher.hpp: srun, mpirun with a host list).
std::vector<ConcurrentRound> side_by_side_rounds(const CalibrationRequest& r, const CalibrationContext& c,
                                                 const CalibrationSetup& s, std::vector<std::string>& notes) {
  if (!r.concurrent) return {};
  std::string why = in_turn_reason(s.tune);
  int nodes = 0;
  const std::optional<TunePlan> plan = why.empty() ? orchestrated_plan(r, c, s, &nodes, &why) : std::nullopt;
  std::vector<ConcurrentRound> out;
  if (plan)
    for (auto& round : schedule_concurrent(plan->scales, nodes)) {
      if (round.groups.size() >= 2) out.push_back(std::move(round));
    }
  if (!out.empty() && !r.simulate && !narrowable(s.launcher, out)) {
    why = "the launcher cannot start a group on its own nodes (srun can, and mpirun with -H host:slots,...)";
    out.clear();
  }
  // srun places a group with --relative inside the allocation; outside one every srun is an allocation of
  // its own, on nodes Slurm picks, which no group could name.
  if (!out.empty() && !r.simulate && is_srun(s.launcher) && !c.env.count("SLURM_JOB_ID")) {
    why =
        "srun outside an allocation makes each job an allocation of its own (run tune inside salloc or "
        "sbatch to place groups on the allocation's nodes)";
    out.clear();
  }
  if (!why.empty()) notes.push_back("scales run in turn: " + why);
  for (size_t i = 0; i < out.size(); ++i) notes.push_back(rounds_note(out, i));
  return out;
}

OrchestratorOptions orchestration(const CalibrationSetup& s, const CalibrationContext& c, bool simulate) {
  OrchestratorOptions oo;
  oo.launcher = s.launcher;
  oo.exe = c.exe;
  oo.measure_args = c.worker_args;
  oo.settings = s.tune.space.settings;
  oo.journal = s.tune.journal;
  oo.resume = s.tune.resume;
  oo.budget = s.tune.budget;
  oo.min_gain = s.tune.min_gain;
  oo.header = calibration_header(s.tune, s.plan ? *s.plan : plan_tune(s.tune));
  if (!simulate) oo.header.scales.clear();  // what the workers measured, from their parts
  // The simulated workers leave out what the gate left out (on GPUs the launcher does).
  if (simulate && !s.health.excluded.empty()) {
    std::string list;
    for (int n : s.health.excluded) list += (list.empty() ? "" : ",") + std::to_string(n);
    oo.measure_args.insert(oo.measure_args.end(), {"--excluded-nodes", list});
  }
  return oo;
}

}  // namespace

std::string simulated_cluster_name(const std::string& stem, int nodes) {
  return stem + "-" + std::to_string(nodes) + "n-sim";
}

CalibrationSetup set_up_calibration(const CalibrationRequest& given, const CalibrationContext& c) {
  check_request(given);
  CalibrationSetup s;
  std::string stem;
  const std::optional<topology::Topology> node = load_node(given, &stem);
  // What the simulator cannot model refuses the request before the health gate measures anything.
  const std::vector<std::string> assumed =
      node ? sim::describe_cluster(*node, given.simulator.nodes, given.simulator.faults).assumptions
           : std::vector<std::string>{};
  // A layout or shape that cannot fit is refused before the health gate measures anything.
  if (node) {
    std::vector<std::string> unused;
    choose_shapes(given, {given.simulator.nodes, static_cast<int>(node->gpus.size())}, unused);
  }
  s.mode = choose_mode(given, c);
  if (s.mode == CalibrationMode::orchestrator)
    s.launcher = choose_launcher(given.launcher, given.simulate, local_gpu_count(c.env), c.env);
  check::ClusterHealth health;
  const CalibrationRequest r = gate_on_health(given, c, node, s, health);
  s.tune = tune_options(r);
  s.tune.processes = c.processes;
  if (node) take_shapes(r, {r.simulator.nodes, static_cast<int>(node->gpus.size())}, s);
  plan_settings(r, node, s.tune.space, s.notes);
  if (r.simulate) s.runner = measure::simulated_runner_options(r.simulator, node);
  s.runner.max_bytes = r.max_bytes;
  s.runner.watchdog_scale = r.watchdog_scale;
  select_settings(r, c, s);
  fill_provenance(r, c, node, stem, s.tune.header);
  s.tune.header.health = s.health.summary;
  s.tune.header.excluded_nodes = s.health.excluded_text;
  s.tune.header.health_findings = s.health.findings;
  s.tune.header.fabric_env = health.fabric_env;
  s.tune.header.hosts = calibrated_hosts(health, s.health.excluded);
  if (!health.fabric_env.empty()) {
    std::string settings;
    for (const auto& [name, value] : health.fabric_env) settings += " " + name + "=" + value;
    s.notes.push_back("[env] also gets the fabric settings every node's probe chose:" + settings);
  }
  if (!r.simulate && !r.dry_run) name_gpu_cluster(r, c, s);
  if (!r.simulate && r.dry_run) plan_gpu_cluster(r, c, s);
  keep_group_scale(r, s);
  leave_out_shared_shapes(s);
  if (r.simulate || r.dry_run) s.plan = plan_tune(s.tune);
  if (r.simulate) {
    // What measures, for the journal's header: the simulator of the whole cluster under NCCL's defaults.
    measure::RunnerOptions whole = s.runner;
    whole.nodes = r.simulator.nodes;
    s.tune.header.runner = measure::make_runner(whole)->info().description;
    for (const auto& a : assumed) s.notes.push_back("the simulator assumed: " + a);
  }
  s.tune.journal =
      profiles::Store(c.store).journal_path_for(s.tune.header.cluster, s.tune.header.nccl_version);
  if (s.mode == CalibrationMode::worker) {
    s.tune.journal = r.journal_part;
    s.tune.resume = std::filesystem::exists(s.tune.journal);  // an interrupted part resumes
  }
  if (s.mode != CalibrationMode::worker && !r.dry_run) {
    s.add_shapes = r.add_shapes;
    s.previous = current_version(c.store, s.tune.header, r.add_shapes);
    if (r.add_shapes && !s.previous) s.notes.push_back("--add-shapes: no current version to add to");
  }
  if (s.mode == CalibrationMode::orchestrator) {
    s.orchestration = orchestration(s, c, r.simulate);
    s.orchestration.rounds = side_by_side_rounds(r, c, s, s.notes);
    s.orchestration.narrow_launcher = !r.simulate;
  }
  return s;
}

namespace {

// The shapes this calibration measured: those of the jobs that ran (a failed job measured nothing new).
std::vector<runners::Scale> measured_shapes(const TuneResult& r) {
  std::vector<runners::Scale> out;
  for (const auto& job : r.jobs)
    if (!job.failed) out.push_back(job.scale);
  return out;
}

void carry_previous(const CalibrationSetup& s, TuneResult& result) {
  if (s.previous)
    carry_previous_shapes(result.profile, *s.previous, measured_shapes(result), s.add_shapes,
                          result.derivation.notes);
}

}  // namespace

TuneResult run_calibration(CalibrationSetup& s, const ProgressFn& progress, const JobNoticeFn& notice) {
  if (s.mode == CalibrationMode::orchestrator) {
    s.orchestration.say = s.tune.say;
    TuneResult result = orchestrate(s.orchestration, notice);
    carry_previous(s, result);
    // On GPUs the scales were not known ahead: the plan's count is the simulator's only.
    if (s.plan) result.plan.measurements = s.plan->measurements;
    result.derivation.notes.insert(result.derivation.notes.end(), s.notes.begin(), s.notes.end());
    result.derivation.notes.push_back("jobs run: " + describe(s.launcher));
    return result;
  }
  RunnerFactory factory = [&s](const runners::ProcessSetting& setting,
                               const runners::Scale& scale) -> std::unique_ptr<runners::Runner> {
    measure::RunnerOptions ro =
        s.runner;  // the simulator's nodes are the whole job's: the shape takes its groups
    ro.shape = scale;
    ro.process_env = setting.env;
    // The runner that named the cluster measures every rank of the job: it serves that shape only.
    if (s.first_runner) {
      const auto info = s.first_runner->info();
      if (scale == runners::Scale{info.nodes, info.ranks}) return std::move(s.first_runner);
      s.first_runner.reset();  // one job's communicators at a time
    }
    return measure::make_runner(ro);
  };
  TuneResult result = tune(s.tune, factory, progress);
  if (s.mode != CalibrationMode::worker) carry_previous(s, result);
  result.derivation.notes.insert(result.derivation.notes.end(), s.notes.begin(), s.notes.end());
  return result;
}

}  // namespace autotune::calibrate
