// nccl-autotune learn: what production taught. Reads the jobs' telemetry under <store>/telemetry/, folds it
// into the cluster's journal (source "production"), and publishes a new profile version where production
// evidence beats the current rules beyond the noise. Wiring only: the work is in calibrate/learn.hpp.
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/learn.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "search/journal.hpp"

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

nlohmann::json rule_json(const profiles::Rule& r) {
  nlohmann::json j = {{"collective", nccl::name(r.collective)},
                      {"min_bytes", r.min_bytes},
                      {"max_bytes", r.max_bytes},
                      {"algorithm", nccl::name(r.algorithm)},
                      {"protocol", nccl::name(r.protocol)},
                      {"channels", r.channels}};
  if (r.runner_up) j["runner_up"] = profiles::runner_up_text(*r.runner_up);
  return j;
}

void print(const calibrate::LearnResult& result, const std::string& format, const std::string& published) {
  if (format == "json") {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : result.changes)
      changes.push_back({{"kind", calibrate::name(c.kind)},
                         {"before", rule_json(c.before)},
                         {"after", c.after ? rule_json(*c.after) : nlohmann::json()},
                         {"why", c.why}});
    nlohmann::json out = {{"telemetry_files", result.files},
                          {"evidence", result.evidence.size()},
                          {"changes", changes},
                          {"published", published.empty() ? nlohmann::json() : nlohmann::json(published)}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << "learn: " << result.files << " telemetry files, " << result.evidence.size()
            << " (shape, collective, size, choice) aggregates\n";
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
  if (!published.empty()) std::cout << "published " << published << "\n";
}

// Appends the production records to the cluster's journal (a header first when the journal is new).
void fold(const profiles::Profile& profile, const std::filesystem::path& store,
          const std::vector<search::JournalRecord>& records, const std::string& command) {
  const auto path =
      profiles::Store(store).journal_path_for(profile.cluster.name, profile.provenance.nccl_version);
  const bool fresh = !std::filesystem::exists(path) || std::filesystem::file_size(path) == 0;
  if (!fresh) search::load_journal(path);  // refuses a file that is not a journal, before appending
  std::filesystem::create_directories(path.parent_path());
  search::JournalWriter writer(path);
  if (fresh) {
    search::JournalHeader h;
    h.created = search::utc_timestamp_now();
    h.command = command;
    h.source = "production";
    h.runner = "telemetry";
    h.nccl_version = profile.provenance.nccl_version;
    h.cluster = profile.cluster.name;
    h.fingerprint = profile.cluster.fingerprint;
    h.strategy = "production";
    writer.write(h);
  }
  writer.write(records);
}

// The files folded move to telemetry/learned/, so the next learn does not count them twice.
void retire(const std::vector<calibrate::TelemetryFile>& files, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "learned");
  for (const auto& f : files) std::filesystem::rename(f.file, dir / "learned" / f.file.filename());
}

}  // namespace

int cmd_learn(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune learn [PROFILE | --cluster NAME] [--store DIR] [--dry-run] [--format text|json] "
      "[--min-gain F]";
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
  spec.options.add_options()("profile", po::value<std::string>(), "the profile to revise")(
      "cluster", po::value<std::string>(), "the store's newest profile for this cluster name")(
      "store", po::value<std::string>(), "profile store (default: the profile's, or $NCCL_AUTOTUNE_STORE)")(
      "dry-run", "show what would change; write nothing")("format", po::value(&format), "text or json")(
      "min-gain", po::value(&min_gain), "smallest gain that counts (default 0.03)");
  spec.positional.add("profile", 1);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (format != "text" && format != "json")
    throw InputError("<arguments>", 0, "--format: expected text or json; found \"" + format + "\"");
  if (!(min_gain >= 0.0 && min_gain < 10.0))
    throw InputError("<arguments>", 0,
                     "--min-gain: expected a number 0..10; found " + std::to_string(min_gain));
  const Target target = resolve(*vm);
  const profiles::Profile current = profiles::read_profile(target.profile);
  const auto dir = target.store / "telemetry";
  const auto files = calibrate::read_telemetry(dir, current.cluster.name);
  calibrate::LearnResult result = calibrate::learn(current, files, search::DeriveOptions{min_gain});
  std::string published;
  if (!vm->count("dry-run")) {
    std::string command = "nccl-autotune learn";
    for (const auto& a : args) command += " " + a;
    if (!result.evidence.empty())
      fold(current, target.store, calibrate::production_records(result.evidence), command);
    if (!result.changes.empty()) {
      profiles::Profile next = result.profile;
      next.provenance.created = search::utc_timestamp_now();
      next.provenance.command = command;
      const auto saved = profiles::Store(target.store).save(next);
      published = saved.string() + " (digest " +
                  profiles::digest_text(profiles::profile_digest(read_file(saved))) + ")";
    }
    if (!files.empty()) retire(files, dir);
  }
  print(result, format, published);
  return kExitOk;
}

}  // namespace autotune::cli
