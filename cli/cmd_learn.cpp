// nccl-autotune learn: what production taught. Reads the jobs' telemetry under <store>/telemetry/, folds it
// into the cluster's journal (source "production"), and publishes a new profile version where production
// evidence beats the current rules beyond the noise. Wiring only: the work is in calibrate/learn.hpp.
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/learn.hpp"
#include "calibrate/learn_transaction.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/rule_json.hpp"
#include "common/input_error.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"

namespace autotune::cli {
namespace {

struct Target {
  std::filesystem::path profile;
  std::filesystem::path store;
};

Target resolve(const po::variables_map& vm) {
  const bool by_path = vm.count("profile") > 0, by_cluster = vm.count("cluster") > 0;
  if (by_path == by_cluster)
    throw InputError("<arguments>", 0,
                     "expected PROFILE or --cluster NAME (one of them); found " +
                         std::string(by_path ? "both" : "neither"));
  std::filesystem::path store =
      vm.count("store") ? std::filesystem::path(vm["store"].as<std::string>()) : std::filesystem::path();
  if (by_path) {
    std::filesystem::path p = vm["profile"].as<std::string>();
    if (store.empty()) {
      store = p.parent_path();
      if (store.filename() == "versions") store = store.parent_path();
    }
    return {p, store};
  }
  if (store.empty()) store = profiles::Store::default_dir();
  const std::string name = vm["cluster"].as<std::string>();
  auto found = profiles::Store(store).find_by_name(name);
  if (found.empty())
    throw InputError(
        "<arguments>", 0,
        "--cluster: expected a cluster name in the store " + store.string() + "; found \"" + name + "\"");
  return {found.front().file, store};
}

nlohmann::json evidence_json(const calibrate::Evidence& e) {
  return {{"collective", nccl::name(e.collective)},
          {"nodes", e.nodes},
          {"ranks", e.ranks},
          {"bytes", e.mean_bytes},
          {"choice", std::string(nccl::name(e.algorithm)) + "/" + std::string(nccl::name(e.protocol)) + "/" +
                         std::to_string(e.channels)},
          {"calls", e.count},
          {"p50_us", e.p50_us},
          {"jobs", e.jobs},
          {"users", e.users}};
}

void print_json(const calibrate::LearnOutcome& o) {
  const auto& result = o.result;
  nlohmann::json changes = nlohmann::json::array(), evidence = nlohmann::json::array(),
                 refused = nlohmann::json::array();
  for (const auto& c : result.changes)
    changes.push_back({{"kind", calibrate::name(c.kind)},
                       {"before", rule_json(c.before)},
                       {"after", c.after ? rule_json(*c.after) : nlohmann::json()},
                       {"why", c.why}});
  for (const auto& e : result.evidence) evidence.push_back(evidence_json(e));
  for (const auto& r : o.refused) refused.push_back({{"file", r.file.string()}, {"why", r.why}});
  nlohmann::json out = {{"telemetry_files", result.files},
                        {"evidence", result.evidence.size()},
                        {"contributors", evidence},
                        {"held_back", result.held_back},
                        {"refused", refused},
                        {"changes", changes},
                        {"published", o.published.empty() ? nlohmann::json() : nlohmann::json(o.published)}};
  std::cout << out.dump(2) << "\n";
}

void print(const calibrate::LearnOutcome& o, const std::string& format, bool dry_run) {
  for (const auto& line : o.journal_skipped) std::cerr << "warning: " << line << "\n";
  for (const auto& r : o.refused)
    std::cerr << "refused (not counted): " << r.file.string() << ": " << r.why << "\n";
  if (!o.finished_pending.empty()) std::cerr << "learn: " << o.finished_pending << "\n";
  if (format == "json") return print_json(o);
  const auto& result = o.result;
  std::cout << "learn: " << result.files << " telemetry files, " << result.evidence.size()
            << " (shape, collective, size, choice) aggregates\n";
  if (dry_run)
    for (const auto& e : result.evidence)
      std::cout << "  evidence: " << nccl::name(e.collective) << " " << nccl::name(e.algorithm) << "/"
                << nccl::name(e.protocol) << "/" << e.channels << " at " << e.nodes << "x" << e.ranks_per_node
                << ", " << static_cast<uint64_t>(e.mean_bytes) << " B: " << e.count << " calls from "
                << calibrate::contributors_text(e) << "\n";
  for (const auto& h : result.held_back) std::cout << "  not counted: " << h << "\n";
  if (result.changes.empty())
    std::cout << "no change: production evidence does not beat the rules beyond the noise\n";
  for (const auto& c : result.changes)
    std::cout << "  " << calibrate::name(c.kind) << ": " << nccl::name(c.before.collective) << " "
              << profiles::describe_rule(c.before) << " " << nccl::name(c.before.algorithm) << "/"
              << nccl::name(c.before.protocol)
              << (c.after && c.kind == calibrate::LearnChange::Kind::replaced
                      ? std::string(" -> ") + std::string(nccl::name(c.after->algorithm)) + "/" +
                            std::string(nccl::name(c.after->protocol))
                      : std::string())
              << "\n    " << c.why << "\n";
  if (!o.published.empty()) std::cout << "published " << o.published << "\n";
}

}  // namespace

int cmd_learn(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune learn [PROFILE | --cluster NAME] [--store DIR] [--dry-run] [--format text|json] "
      "[--min-gain F] [--min-jobs N] [--min-users N]";
  spec.description =
      "Folds the jobs' telemetry (<store>/telemetry/, written by the plugin under [online] telemetry = "
      "true)\n"
      "into the cluster's journal as production records, then revises the profile's rules where production\n"
      "beats them beyond the noise (tune's test: interquartile ranges apart, gain above --min-gain): a\n"
      "faster alternative replaces a rule, a rule slower than NCCL's default was at calibration is dropped,\n"
      "a runner-up explored that lost stops being explored. Publishes the result as a new profile version\n"
      "(the store's versioned save). --dry-run shows the changes and writes nothing.";
  std::string format = "text";
  double min_gain = search::DeriveOptions{}.min_gain;
  int min_jobs = calibrate::LearnOptions{}.min_jobs, min_users = calibrate::LearnOptions{}.min_users;
  spec.options.add_options()("profile", po::value<std::string>(), "the profile to revise")(
      "cluster", po::value<std::string>(), "the store's newest profile for this cluster name")(
      "store", po::value<std::string>(), "profile store (default: the profile's, or $NCCL_AUTOTUNE_STORE)")(
      "dry-run", "show what would change; write nothing")("format", po::value(&format), "text or json")(
      "min-gain", po::value(&min_gain), "smallest gain that counts (default 0.03)")(
      "min-jobs", po::value(&min_jobs), "jobs whose telemetry a change needs (default 2)")(
      "min-users", po::value(&min_users), "users whose jobs a change needs (default 2)");
  spec.positional.add("profile", 1);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (format != "text" && format != "json")
    throw InputError("<arguments>", 0, "--format: expected text or json; found \"" + format + "\"");
  if (!(min_gain >= 0.0 && min_gain < 10.0))
    throw InputError("<arguments>", 0,
                     "--min-gain: expected a number 0..10; found " + std::to_string(min_gain));
  if (min_jobs < 1 || min_jobs > 1000 || min_users < 1 || min_users > 1000)
    throw InputError("<arguments>", 0, "--min-jobs, --min-users: expected 1..1000");
  const Target target = resolve(*vm);
  calibrate::LearnRequest request;
  request.profile = target.profile;
  request.store = target.store;
  request.options.derive.min_gain = min_gain;
  request.options.min_jobs = min_jobs;
  request.options.min_users = min_users;
  request.dry_run = vm->count("dry-run") > 0;
  request.command = "nccl-autotune learn";
  for (const auto& a : args) request.command += " " + a;
  print(calibrate::run_learn(request), format, request.dry_run);
  return kExitOk;
}

}  // namespace autotune::cli
