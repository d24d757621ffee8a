// nccl-autotune tune: calibrate the cluster (or the simulator) and write a profile. Wiring only: the search,
// the journal and the derivation live in tuner/tune.hpp.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "autotune/version.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "nccl/version.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "report/report_html.hpp"
#include "report/table_format.hpp"
#include "runners/process_group.hpp"
#include "topology/analysis.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/reader.hpp"
#include "tuner/orchestrator.hpp"
#include "tuner/runner_factory.hpp"
#include "tuner/tune.hpp"

namespace autotune::cli {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
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

// "20m", "90s", "1h", "1h30m", or plain seconds.
double parse_duration(const std::string& text) {
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
    if (j == i) break;
    // strtod, not stod: "." or a run of digits too long for a double is a bad duration, not an exception.
    const std::string number = text.substr(i, j - i);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(v)) break;
    char unit = j < text.size() ? text[j] : 's';
    double scale = unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : -1;
    if (scale < 0) break;
    total += v * scale;
    i = j < text.size() ? j + 1 : j;
    any = true;
  }
  if (!any || i != text.size() || total <= 0)
    throw InputError("<arguments>", 0,
                     "--budget: expected a duration like 20m, 90s or 1h30m, found '" + text + "'");
  return total;
}

// "3%" or "0.03".
double parse_gain(const std::string& text) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size() - 1 && text.back() == '%')
      v /= 100.0;
    else if (used != text.size())
      throw std::invalid_argument(text);
    if (v >= 0 && v < 10) return v;
  } catch (const std::exception&) {
  }
  throw InputError("<arguments>", 0,
                   "--min-gain: expected a fraction (0.03) or a percentage (3%), found '" + text + "'");
}

std::string format_candidate(const profiles::Rule& r) {
  std::string s = std::string(nccl::name(r.algorithm)) + "/" + std::string(nccl::name(r.protocol));
  if (r.channels > 0) s += "/ch" + std::to_string(r.channels);
  return s;
}

nlohmann::json summary_json(const tuner::TuneResult& r, const std::string& path) {
  using nlohmann::json;
  json j;
  j["profile"] = path;
  j["source"] = r.header.source;
  j["strategy"] = r.header.strategy;
  j["measured"] = r.measured;
  j["replayed"] = r.replayed;
  j["planned"] = r.plan.measurements;
  j["env"] = r.profile.env;
  j["rules"] = json::array();
  for (const auto& d : r.derivation.rules)
    j["rules"].push_back({{"collective", nccl::name(d.rule.collective)},
                          {"nodes", d.scale.nodes},
                          {"ranks", d.scale.ranks},
                          {"min_bytes", d.rule.min_bytes},
                          {"max_bytes", d.rule.max_bytes},
                          {"algorithm", nccl::name(d.rule.algorithm)},
                          {"protocol", nccl::name(d.rule.protocol)},
                          {"channels", d.rule.channels},
                          {"busbw_gbps", d.rule.busbw_gbps.value_or(0)},
                          {"default_busbw_gbps", d.rule.default_busbw_gbps.value_or(0)},
                          {"gain", d.mean_gain}});
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
                         {"skipped", job.skipped}});
  j["notes"] = r.derivation.notes;
  return j;
}

void print_summary(const tuner::TuneResult& r, const std::string& path) {
  std::cout << "profile: " << path << " (source = \"" << r.header.source << "\")\n";
  std::cout << "measurements: " << r.measured << " made, " << r.replayed << " from the journal\n\n";
  if (r.derivation.rules.empty()) {
    std::cout << "no rules: NCCL's own choice was as good as any candidate everywhere\n";
  } else {
    report::TextTable t(
        {"collective", "nodes", "ranks", "sizes", "algo/proto", "busbw", "default", "gain"},
        {report::Align::left, report::Align::right, report::Align::right, report::Align::left,
         report::Align::left, report::Align::right, report::Align::right, report::Align::right});
    for (const auto& d : r.derivation.rules)
      t.add_row({std::string(nccl::name(d.rule.collective)), std::to_string(d.scale.nodes),
                 std::to_string(d.scale.ranks), report::human_size_range(d.rule.min_bytes, d.rule.max_bytes),
                 format_candidate(d.rule), report::format_gbps(d.rule.busbw_gbps.value_or(0)),
                 report::format_gbps(d.rule.default_busbw_gbps.value_or(0)),
                 report::format_gain(d.mean_gain)});
    std::cout << t.render();
  }
  std::cout << "\n[env]: ";
  if (r.profile.env.empty()) std::cout << "none (NCCL's defaults)\n";
  for (const auto& [k, v] : r.profile.env) std::cout << k << "=" << v << " ";
  if (!r.profile.env.empty()) std::cout << "\n";
  for (const auto& n : r.derivation.notes) std::cout << "note: " << n << "\n";
  for (const auto& f : r.derivation.failed)
    std::cout << "failed candidate: " << nccl::name(f.collective) << " " << runners::to_string(f.candidate)
              << " under '" << f.setting << "' at " << f.scale.nodes
              << " node(s): " << runners::name(f.outcome) << " at " << f.sizes.size() << " size(s)"
              << (f.detail.empty() ? "" : ": " + f.detail) << "\n";
  for (const auto& job : r.jobs) {
    if (job.failed)
      std::cout << "failed job '" << job.setting.id << "' at " << job.scale.nodes
                << " node(s): " << job.detail << "\n";
    for (const auto& s : job.skipped) std::cout << "not measured: " << s << "\n";
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

}  // namespace

int cmd_tune(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune tune [--simulate [--example NAME | --topology FILE] [--nodes N]] [--collectives LIST] "
      "[--min-bytes 8] [--max-bytes 8G] [--strategy adaptive|exhaustive] [--budget 20m] [--min-gain 3%] "
      "[--scales 1,2,all] [--launcher \"srun -N 2\"] [--resume] [--dry-run] [--from-journal FILE] [--store "
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
  std::string collectives, min_bytes = "8", max_bytes = "8G", strategy = "adaptive", budget, min_gain = "3%",
                           scales = "all", store_dir, format = "text", example, topology_file, from_journal,
                           channels, ib_hca, cross_nic, name, launcher_text, journal_part, report;
  int job_id = -1;
  int nodes = 1, reps = 5;
  uint64_t seed = 1;
  double noise = 0.03;
  spec.options.add_options()("simulate", "measure the labelled simulator instead of GPUs")(
      "example", po::value(&example), "simulator: a bundled node (h100-8x, h100-8x-2nic, a100-pcie-8x)")(
      "topology", po::value(&topology_file), "simulator: a probed node (hwloc or NCCL topology XML)")(
      "nodes", po::value(&nodes)->default_value(1), "simulator: how many such nodes")(
      "seed", po::value(&seed)->default_value(1), "simulator: noise seed")(
      "noise", po::value(&noise)->default_value(0.03), "simulator: relative noise per repetition")(
      "collectives", po::value(&collectives), "comma list (default: all five)")(
      "min-bytes", po::value(&min_bytes)->default_value(min_bytes), "smallest size (8, 64K, 1M)")(
      "max-bytes", po::value(&max_bytes)->default_value(max_bytes), "largest size")(
      "channels", po::value(&channels), "comma list of channel counts to try (default: NCCL decides)")(
      "scales", po::value(&scales)->default_value(scales), "node counts to calibrate: 1,2,4,all")(
      "ib-hca", po::value(&ib_hca), "NCCL_IB_HCA values to try, separated by ';' (default: the probe's)")(
      "cross-nic", po::value(&cross_nic), "NCCL_CROSS_NIC values to try: 0,1 (default: the probe's)")(
      "strategy", po::value(&strategy)->default_value(strategy), "adaptive or exhaustive")(
      "reps", po::value(&reps)->default_value(reps), "timed repetitions per measurement")(
      "budget", po::value(&budget), "time for the measurements: 20m, 90s, 1h")(
      "min-gain", po::value(&min_gain)->default_value(min_gain), "a rule must beat NCCL's default by this")(
      "resume", "continue the journal of an interrupted calibration")(
      "dry-run", "print the plan and the estimated time; measure nothing")(
      "from-journal", po::value(&from_journal), "re-derive the profile from a journal, measuring nothing")(
      "store", po::value(&store_dir),
      "profile store directory (default: $NCCL_AUTOTUNE_STORE, XDG data dir)")(
      "name", po::value(&name), "cluster name for the profile (default: from the node and node count)")(
      "format", po::value(&format)->default_value(format), "text or json (the final summary)")(
      "report", po::value(&report), "also write the HTML report of this calibration to FILE")(
      "launcher", po::value(&launcher_text),
      "start each job through this command: \"srun -N 2 --ntasks-per-node 8\", \"mpirun -np 16 -H a:8,b:8\"")(
      "worker", "internal: measure one job (--job-id) into a journal part (--journal-part)")(
      "job-id", po::value(&job_id), "internal: the job's index among the process-wide settings")(
      "journal-part", po::value(&journal_part), "internal: where the worker writes its journal part");
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (format != "text" && format != "json")
    throw InputError("<arguments>", 0, "--format: expected text or json, found '" + format + "'");
  const bool simulate = vm->count("simulate") > 0;
  double gain = parse_gain(min_gain);
  profiles::Store store(store_dir.empty() ? profiles::Store::default_dir()
                                          : std::filesystem::path(store_dir));

  auto finish = [&](const tuner::TuneResult& r, const std::filesystem::path& journal) {
    std::string path = store.save(r.profile).string();
    if (!report.empty()) {
      report::write_report(report, tuner::load_journal(journal), r.profile);
      std::fprintf(stderr, "report: %s\n", report.c_str());
    }
    if (format == "json")
      std::cout << summary_json(r, path).dump(2) << "\n";
    else
      print_summary(r, path);
    return kExitOk;
  };

  if (!from_journal.empty()) return finish(tuner::tune_from_journal(from_journal, {gain}), from_journal);

  // The node, the cluster, and what to sweep.
  std::optional<topology::Topology> topo;
  std::string cluster_stem;
  if (simulate) {
    if (!example.empty() && !topology_file.empty())
      throw InputError("<arguments>", 0, "either --example or --topology, found both");
    if (topology_file.empty()) {
      if (example.empty()) example = "h100-8x";
      topo = topology::load_example(example);
      cluster_stem = example;
    } else {
      topo = topology::read_topology_file(topology_file);
      cluster_stem = std::filesystem::path(topology_file).stem().string();
    }
    if (nodes < 1)
      throw InputError("<arguments>", 0, "--nodes: expected at least 1, found " + std::to_string(nodes));
  } else if (!example.empty() || !topology_file.empty() || nodes != 1) {
    throw InputError("<arguments>", 0,
                     "--example, --topology and --nodes describe the simulator: add --simulate");
  }
  auto& processes = runners::job_processes();
  const bool under_mpi = runners::launched_by_mpi();
  const bool worker = vm->count("worker") > 0;
  const bool dry_run = vm->count("dry-run") > 0;
  if (worker && (job_id < 0 || journal_part.empty()))
    throw InputError("<arguments>", 0,
                     "--worker: expected --job-id N and --journal-part PATH, found not both");
  // Orchestrate: one job per process-wide setting, each a fresh set of processes. The simulator models the
  // settings in-process, so it orchestrates only when asked to (--launcher), to test the plumbing.
  const bool orchestrating = !worker && !under_mpi && (!launcher_text.empty() || !simulate);
  if (under_mpi && !launcher_text.empty())
    throw InputError("<arguments>", 0, "--launcher: this process was itself started under mpirun/srun");

  tuner::TuneOptions o;
  o.strategy = strategy;
  o.repetitions = reps;
  o.min_gain = gain;
  o.resume = vm->count("resume") > 0;
  if (!budget.empty()) o.budget = std::chrono::duration<double>(parse_duration(budget));
  if (!collectives.empty()) o.space.collectives = parse_collective_list(collectives, "--collectives");
  auto parse_bytes = [](const std::string& text, const char* what) {
    auto v = parse_byte_size(text);
    if (!v)
      throw InputError("<arguments>", 0,
                       std::string(what) + ": expected a size like 8, 64K, 8G; found '" + text + "'");
    return *v;
  };
  o.space.min_bytes = parse_bytes(min_bytes, "--min-bytes");
  o.space.max_bytes = parse_bytes(max_bytes, "--max-bytes");
  if (!channels.empty())
    for (const auto& item : split(channels)) o.space.channels.push_back(parse_int(item, "--channels"));

  // Scales: the simulator builds each one; on GPUs this build measures the communicator it was started with.
  int full_nodes = simulate ? nodes : 1;
  int gpus_per_node = topo ? static_cast<int>(topo->gpus.size()) : 0;
  std::vector<std::string> notes;
  if (simulate) {
    for (const auto& item : split(scales)) {
      int n = item == "all" ? full_nodes : parse_int(item, "--scales");
      if (n < 1 || n > full_nodes)
        throw InputError("<arguments>", 0,
                         "--scales: expected node counts from 1 to " + std::to_string(full_nodes) +
                             ", found '" + item + "'");
      o.space.scales.push_back({n, n * gpus_per_node});
    }
  }

  // Process-wide settings: the probe's suggestions (or the given ones), only where there is a network.
  o.space.settings.push_back({"default", {}});
  auto given_hcas = [&] {
    std::vector<std::string> hcas;
    size_t start = 0;
    while (!ib_hca.empty() && start <= ib_hca.size()) {
      size_t semi = ib_hca.find(';', start);
      hcas.push_back(ib_hca.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    return hcas;
  };
  if (!simulate) {
    // On GPUs the settings to sweep are the ones asked for; each is a job of fresh processes.
    for (const auto& h : given_hcas()) o.space.settings.push_back({"ib_hca=" + h, {{"NCCL_IB_HCA", h}}});
    if (!cross_nic.empty())
      for (const auto& v : split(cross_nic))
        o.space.settings.push_back({"cross_nic=" + v, {{"NCCL_CROSS_NIC", v}}});
  }
  if (topo) {
    auto analysis = topology::analyze(*topo);
    std::set<nccl::Algorithm> algorithms;
    for (const auto& a : analysis.algorithms)
      if (auto parsed = nccl::parse_algorithm(a)) algorithms.insert(*parsed);
    if (!algorithms.empty()) o.space.algorithms = algorithms;
    if (full_nodes > 1) {
      std::vector<std::string> hcas = given_hcas();
      if (ib_hca.empty()) {
        hcas = analysis.ib_hca_candidates;
        // The most inclusive set is what NCCL uses by default: it is the default job.
        if (!hcas.empty()) hcas.erase(hcas.begin());
      }
      for (const auto& h : hcas) o.space.settings.push_back({"ib_hca=" + h, {{"NCCL_IB_HCA", h}}});
      std::vector<std::string> cross =
          cross_nic.empty()
              ? (analysis.sweep_cross_nic ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{})
              : split(cross_nic);
      for (const auto& v : cross) o.space.settings.push_back({"cross_nic=" + v, {{"NCCL_CROSS_NIC", v}}});
    } else if (!ib_hca.empty() || !cross_nic.empty()) {
      notes.push_back("one node: NCCL_IB_HCA and NCCL_CROSS_NIC do not matter there and were not swept");
    }
  }
  if (!simulate && under_mpi && !worker) {
    // NCCL reads process-wide settings once per process: this process measures the ones it was started with.
    notes.push_back("process-wide settings were not swept (started under mpirun/srun)");
    o.space.settings = {{"default", {}}};
  }
  if (worker) {
    if (job_id >= static_cast<int>(o.space.settings.size()))
      throw InputError("<arguments>", 0,
                       "--job-id: expected 0 to " + std::to_string(o.space.settings.size() - 1) + ", found " +
                           std::to_string(job_id));
    o.space.settings = {o.space.settings[job_id]};
  }
  tuner::Launcher launcher;
  if (orchestrating) {
    auto env = tuner::environment_map();
    launcher = tuner::choose_launcher(launcher_text, simulate, tuner::local_gpu_count(env), env);
  }

  // Provenance and where things go.
  o.header.tool_version = kToolVersion;
  o.header.source = simulate ? "simulated" : "measured";
  std::string command = "nccl-autotune tune";
  for (const auto& a : args) command += " " + a;
  o.header.command = command;
  const auto built = nccl::Version::from_code(kBuiltNcclVersion);
  const int nccl_mm = built ? built->major_minor() : 0;
  o.header.nccl_version = built ? built->text() : "";
  if (topo) {
    o.header.fingerprint = topology::fingerprint(*topo, nccl_mm);
    o.header.gpu_model = topo->gpus.empty() ? "" : topo->gpus[0].name;
    o.header.gpus_per_node = gpus_per_node;
  }
  o.header.nodes = full_nodes;
  o.header.seed = simulate ? seed : 0;
  o.header.cluster =
      !name.empty() ? name : (simulate ? cluster_stem + "-" + std::to_string(nodes) + "n-sim" : "");

  tuner::RunnerOptions base;
  base.simulate = simulate;
  base.topology = topo;
  base.seed = seed;
  base.noise = noise;
  base.max_bytes = o.space.max_bytes;
  if (worker) base.process_env = o.space.settings.front().env;
  std::unique_ptr<runners::Runner> probe_runner;
  if (!simulate && orchestrating && !dry_run) {
    // The GPUs belong to the workers: the orchestrator only names the cluster.
    o.space.scales = {{1, 1}};  // for the plan; the workers' parts say what was measured
    o.header.nodes = 0;
    if (o.header.cluster.empty()) {
      char host[256] = {0};
      ::gethostname(host, sizeof host - 1);
      auto n = launcher.words.empty() ? std::optional<int>(1) : tuner::launcher_nodes(launcher.words);
      o.header.cluster = std::string(host) + "-" + (n ? std::to_string(*n) + "n" : std::string("multi"));
    }
  } else if (!simulate) {
    // The real cluster is what mpirun started: ask the runner, and name the cluster from it.
    probe_runner = tuner::make_runner(base);
    auto info = probe_runner->info();
    o.space.scales = {{info.nodes, info.ranks}};
    o.header.nodes = info.nodes;
    o.header.gpus_per_node = info.gpus_per_node;
    o.header.gpu_model = info.gpu_model;
    if (!info.nccl_version.empty()) o.header.nccl_version = info.nccl_version;
    if (o.header.cluster.empty()) {
      char host[256] = {0};
      ::gethostname(host, sizeof host - 1);
      o.header.cluster = std::string(host) + "-" + std::to_string(info.nodes) + "n";
    }
  }
  // The journal lives next to the profile: same name, .journal.jsonl.
  profiles::Profile naming;
  naming.cluster.name = o.header.cluster;
  naming.provenance.nccl_version = o.header.nccl_version;
  auto profile_path = store.path_for(naming);
  o.journal = profile_path.parent_path() / (profile_path.stem().string() + ".journal.jsonl");
  o.write_journal = processes.is_root();
  o.agree = [&processes](bool stop) {
    std::byte b = static_cast<std::byte>(stop ? 1 : 0);
    processes.broadcast(std::span<std::byte>(&b, 1));
    return b != std::byte{0};
  };

  if (dry_run) {
    auto plan = tuner::plan_tune(o);
    if (!processes.is_root()) return kExitOk;
    std::cout << "plan (" << plan.strategy << "), nothing measured:\n";
    std::cout << "  jobs (process-wide settings): " << plan.space.settings.size() << "\n";
    for (const auto& s : plan.space.settings) std::cout << "    " << s.id << "\n";
    std::cout << "  scales:";
    for (const auto& s : plan.space.scales)
      std::cout << " " << s.nodes << "x" << s.ranks / std::max(1, s.nodes);
    std::cout << "\n  sizes: " << plan.space.sizes.size() << " ("
              << report::human_size_range(plan.space.sizes.front(), plan.space.sizes.back()) << ", x2)\n";
    for (const auto& cs : plan.space.collectives)
      std::cout << "  " << nccl::name(cs.collective) << ": " << cs.candidates.size()
                << " candidates + NCCL's default\n";
    std::cout << "  measurements: " << plan.measurements << (plan.strategy == "adaptive" ? " (estimate)" : "")
              << "\n";
    std::cout << "  estimated time on GPUs: " << static_cast<long>(std::lround(plan.estimated_s)) << " s\n";
    std::cout << "  journal: " << o.journal.string() << "\n";
    if (orchestrating) {
      std::cout << "  jobs run: " << launcher.origin;
      for (const auto& w : launcher.words) std::cout << " " << w;
      std::cout << "\n";
    }
    for (const auto& n : notes) std::cout << "note: " << n << "\n";
    return kExitOk;
  }

  if (worker) {
    o.journal = journal_part;
    o.resume = std::filesystem::exists(o.journal);  // an interrupted part resumes
  }
  if (orchestrating) {
    tuner::OrchestratorOptions oo;
    oo.launcher = launcher;
    oo.exe = std::filesystem::read_symlink("/proc/self/exe");
    oo.measure_args = worker_args(args);
    oo.settings = o.space.settings;
    oo.journal = o.journal;
    oo.resume = o.resume;
    oo.budget = o.budget;
    oo.min_gain = o.min_gain;
    auto plan = tuner::plan_tune(o);
    oo.header = tuner::calibration_header(o, plan);
    if (!simulate) oo.header.scales.clear();  // what the workers measured, from their parts
    std::string shown;
    for (const auto& w : launcher.words) shown += " " + w;
    std::fprintf(stderr, "%zu job(s), one per process-wide setting; jobs run: %s%s\n", oo.settings.size(),
                 launcher.origin.c_str(), shown.c_str());
    auto result = tuner::orchestrate(oo, [](const tuner::JobNotice& n) {
      std::fprintf(stderr, "job %d/%d '%s': %s\n", n.job + 1, n.jobs_total, n.setting.c_str(),
                   n.what.c_str());
    });
    if (simulate) result.plan.measurements = plan.measurements;  // on GPUs the scales were not known ahead
    notes.push_back("jobs run: " + launcher.origin + shown);
    result.derivation.notes.insert(result.derivation.notes.end(), notes.begin(), notes.end());
    return finish(result, o.journal);
  }

  const bool tty = processes.is_root() && ::isatty(STDERR_FILENO);
  tuner::ProgressFn progress = [&](const tuner::TuneProgress& p) {
    if (!processes.is_root()) return;
    if (tty) {
      std::fprintf(stderr, "\r\033[Kjob %d/%d %s: %llu/%llu measurements, %llu sizes, %.0f s elapsed",
                   p.jobs_done + 1 > p.jobs_total ? p.jobs_total : p.jobs_done + 1, p.jobs_total,
                   p.job.c_str(), static_cast<unsigned long long>(p.measurements_done),
                   static_cast<unsigned long long>(p.measurements_planned),
                   static_cast<unsigned long long>(p.sizes_done), p.elapsed_s);
      if (p.remaining_s >= 0) std::fprintf(stderr, ", ~%.0f s left", p.remaining_s);
      std::fflush(stderr);
    } else if (p.job_finished) {
      std::fprintf(stderr, "job %d/%d done: %s, %llu measurements so far, %.1f s\n", p.jobs_done,
                   p.jobs_total, p.job.c_str(), static_cast<unsigned long long>(p.measurements_done),
                   p.elapsed_s);
    }
  };
  tuner::RunnerFactory factory = [&](const runners::ProcessSetting& setting,
                                     const runners::Scale& scale) -> std::unique_ptr<runners::Runner> {
    if (probe_runner) return std::move(probe_runner);
    tuner::RunnerOptions ro = base;
    ro.nodes = scale.nodes;
    ro.process_env = setting.env;
    return tuner::make_runner(ro);
  };
  auto result = tuner::tune(o, factory, progress);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (worker) {
    bool failed = std::any_of(result.jobs.begin(), result.jobs.end(), [](const auto& j) { return j.failed; });
    if (processes.is_root()) {
      std::cout << "job '" << o.space.settings.front().id << "': " << result.measured << " measured, "
                << result.replayed << " from the part, " << (failed ? "failed" : "finished") << "\n";
      for (const auto& j : result.jobs)
        if (j.failed) std::cout << "failed at " << j.scale.nodes << " node(s): " << j.detail << "\n";
    }
    return failed ? kExitFailed : kExitOk;
  }
  result.derivation.notes.insert(result.derivation.notes.end(), notes.begin(), notes.end());
  if (!processes.is_root()) return kExitOk;
  return finish(result, o.journal);
}

}  // namespace autotune::cli
