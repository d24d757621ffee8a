// nccl-autotune verify: whether a profile's rules still hold (after an NCCL or driver upgrade, or as a
// periodic check). Wiring only: the profile and the runners in, calibrate::verify_profile, the verdicts out.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "autotune/version.hpp"
#include "calibrate/calibration_setup.hpp"
#include "calibrate/verify.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/rule_json.hpp"
#include "cli/simulator_options.hpp"
#include "cli/verify_upkeep.hpp"
#include "common/input_error.hpp"
#include "common/process_launcher.hpp"
#include "common/text.hpp"
#include "common/utc_time.hpp"
#include "launcher/default_services.hpp"
#include "launcher/launch_plan.hpp"
#include "nccl/version.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "report/table_format.hpp"

namespace autotune::cli {
namespace {

namespace fs = std::filesystem;

struct VerifyArgs {
  std::string profile, store, min_gain = "3%", format = "text";
  int reps = 5;
  SimulatorArgs simulator;
};

void describe_verify(CommandSpec& spec, VerifyArgs& a) {
  spec.usage = "nccl-autotune verify [PROFILE] " + std::string(kSimulatorUsage) +
               " [--reps 5] [--min-gain 3%] [--store DIR] [--write] [--if-changed] [--format text|json]";
  spec.description =
      "Measures each rule of a profile again, at a few sizes of its range against NCCL's default there (at "
      "the "
      "rule's scale, under the profile's [env]), and says per rule whether it still wins, no longer wins or "
      "now loses. Exit status 1 when a rule now loses beyond the noise, 0 otherwise. PROFILE is a profile "
      "file "
      "or a cluster name in the store; without it, the profile `run` would use on this node (with "
      "--simulate, "
      "the one `tune --simulate` names for the same options). --write stores a new version of the profile "
      "without the rules that no longer win (the store keeps the old one as .prev). The store records each "
      "verify's outcome and the NCCL and driver it ran under; --if-changed verifies only when this node's "
      "differ from those (for a timer: docs/operations.md). See docs/verify.md.";
  add_simulator_options(spec.options, a.simulator, "measure the labelled simulator instead of GPUs");
  spec.options.add_options()("reps", po::value(&a.reps)->default_value(a.reps),
                             "timed repetitions per measurement (doubled where in "
                             "doubt)")("min-gain", po::value(&a.min_gain)->default_value(a.min_gain),
                                       "a rule still wins past this gain")(
      "store", po::value(&a.store), "profile store directory (default: $NCCL_AUTOTUNE_STORE, XDG data dir)")(
      "write", "store a new version of the profile without the rules that no longer win")(
      "if-changed", "verify only when NCCL or the driver differ from the last verify's (else exit 0)")(
      "format", po::value(&a.format)->default_value(a.format), "text or json")(
      "profile", po::value(&a.profile), "the profile (also the first argument)");
  spec.positional.add("profile", 1);
}

// A file, a cluster name in the store, or (none given) the profile `run` would use here. Read from its TOML:
// the evidence is there, not in the compiled rules.
// `simulated_name`: with --simulate, the cluster `tune --simulate` names for the same options.
std::pair<profiles::Profile, fs::path> which_profile(const VerifyArgs& a, const std::string& simulated_name,
                                                     const profiles::Store& store) {
  std::string name = a.profile.empty() ? simulated_name : a.profile;
  if (name.empty()) {
    launcher::LaunchOptions options;
    if (!a.store.empty()) options.store = a.store;
    const auto plan =
        launcher::plan_launch(options, launcher::default_services(), launcher::process_environment());
    if (!plan.profile_path)
      throw InputError("<arguments>", 0,
                       "expected a PROFILE to verify, found none for this node: " + plan.problem_text);
    return {profiles::read_profile(*plan.profile_path), *plan.profile_path};
  }
  // Anything on disk under the name (a link loop, a directory, a device too) or any path is read as a file,
  // so the input opener says what is wrong with it; only a plain word is a cluster name.
  std::error_code ec;
  if (fs::exists(fs::symlink_status(name, ec)) || name.find('/') != std::string::npos)
    return {profiles::read_profile(name), name};
  auto found = store.find_by_name(name);
  if (found.empty())
    throw InputError("<arguments>", 0,
                     "expected a profile file or a cluster name in the store " + store.dir().string() +
                         ", found \"" + printable(name) + "\"");
  return {profiles::read_profile(found.front().file), found.front().file};
}

std::string gain_text(const search::GainInterval& g) {
  if (!g.measured()) return "-";
  return report::format_gain(g.gain) + " (" + report::format_gain(g.low) + ".." +
         report::format_gain(g.high) + ")";
}

void print_text(const calibrate::VerifyResult& r, const fs::path& file) {
  std::printf("profile: %s\nmeasured by: %s\n\n", file.c_str(), r.runner.empty() ? "-" : r.runner.c_str());
  report::TextTable t(
      {"collective", "nodes", "ranks", "sizes", "choice", "calibrated", "now", "verdict", "why"});
  for (const auto& c : r.rules)
    t.add_row({std::string(nccl::name(c.rule.collective)), std::to_string(c.scale.nodes),
               std::to_string(c.scale.ranks), report::human_size_range(c.rule.min_bytes, c.rule.max_bytes),
               std::string(nccl::name(c.rule.algorithm)) + "/" + std::string(nccl::name(c.rule.protocol)) +
                   (c.rule.channels ? "/ch" + std::to_string(c.rule.channels) : ""),
               c.calibrated ? report::format_gain(*c.calibrated) : "-", gain_text(c.now),
               std::string(calibrate::name(c.verdict)), c.detail});
  std::cout << t.render();
  std::printf(
      "\n%d still win, %d no longer win, %d now lose, %d not checked (%llu measurements; gain = NCCL's "
      "default time / the rule's - 1, over the sizes measured, with its interval)\n",
      r.count(calibrate::Verdict::still_wins), r.count(calibrate::Verdict::no_longer_wins),
      r.count(calibrate::Verdict::now_loses), r.count(calibrate::Verdict::not_checked),
      static_cast<unsigned long long>(r.measurements));
}

nlohmann::json result_json(const calibrate::VerifyResult& r, const fs::path& file,
                           const std::string& written) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& c : r.rules) {
    nlohmann::json j = rule_json(c.rule);
    j["verdict"] = calibrate::name(c.verdict);
    j["detail"] = c.detail;
    j["measured_nodes"] = c.scale.nodes;
    j["measured_ranks"] = c.scale.ranks;
    j["sizes_measured"] = c.sizes;
    j["samples_now"] = c.samples;
    if (c.calibrated) j["gain_calibrated"] = *c.calibrated;
    if (c.now.measured())
      j["gain_now"] = {
          {"gain", c.now.gain}, {"low", c.now.low}, {"high", c.now.high}, {"confidence", c.now.confidence}};
    rules.push_back(j);
  }
  nlohmann::json out = {{"profile", file.string()},
                        {"runner", r.runner},
                        {"source", r.source},
                        {"measurements", r.measurements},
                        {"rules", rules},
                        {"still_wins", r.count(calibrate::Verdict::still_wins)},
                        {"no_longer_wins", r.count(calibrate::Verdict::no_longer_wins)},
                        {"now_loses", r.count(calibrate::Verdict::now_loses)},
                        {"not_checked", r.count(calibrate::Verdict::not_checked)}};
  if (!written.empty()) out["written"] = written;
  return out;
}

// The new version: the rules that still win (or were not checked), dated now, for the NCCL that measured.
std::string write_new_version(const profiles::Store& store, const profiles::Profile& p,
                              const calibrate::VerifyResult& r, const Args& args) {
  profiles::Profile next = calibrate::without_failed_rules(p, r);
  next.provenance.created = utc_timestamp_now();
  next.provenance.tool_version = kToolVersion;
  next.provenance.command = "nccl-autotune verify";
  for (const auto& a : args) next.provenance.command += " " + a;
  if (r.source == "measured" && nccl::Version::parse(r.nccl_version))
    next.provenance.nccl_version = r.nccl_version;
  const bool replaces = fs::exists(store.path_for(next));
  const std::string path = store.save(next).string();
  return path + (replaces ? " (the version it replaces: " + path + ".prev)" : "");
}

}  // namespace

int cmd_verify(const Args& args) {
  CommandSpec spec;
  VerifyArgs a;
  describe_verify(spec, a);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (a.format != "text" && a.format != "json")
    throw InputError("<arguments>", 0, "--format: expected text or json, found '" + a.format + "'");
  const std::optional<sim::SimulatorSpec> simulated = simulator_spec(*vm, a.simulator);
  const bool simulate = simulated.has_value();
  calibrate::VerifyTarget target;
  target.simulate = simulate;
  if (simulated) target.simulator = *simulated;
  calibrate::VerifyOptions options;
  options.derive.min_gain = parse_gain(a.min_gain, "--min-gain");
  options.repetitions = a.reps;
  calibrate::check_verify_request(target, options);
  std::string simulated_name;
  if (simulated) {
    std::string stem;
    target.topology = sim::simulated_node(*simulated, &stem);
    simulated_name = calibrate::simulated_cluster_name(stem, simulated->nodes);
  }
  const profiles::Store store(a.store.empty() ? profiles::Store::default_dir() : fs::path(a.store));
  const auto [profile, file] = which_profile(a, simulated_name, store);
  const NodeVersions versions = node_versions();
  if (vm->count("if-changed"))
    if (auto same = unchanged_since_last_verify(store.dir(), profile.cluster.name, versions)) {
      std::printf("verify: nothing to do: %s\n", same->c_str());
      return kExitOk;
    }
  if (!simulate)
    for (const auto& [k, v] : calibrate::environment_to_set(profile, environment_map()))
      ::setenv(k.c_str(), v.c_str(), 1);
  const calibrate::VerifyResult result =
      calibrate::verify_profile(profile, options, calibrate::verify_runners(target, profile));
  // A check that could check nothing must not pass as one that found everything well (nor date a version).
  const bool nothing_checked = !result.rules.empty() && result.count(calibrate::Verdict::not_checked) ==
                                                            static_cast<int>(result.rules.size());
  record_verify(store.dir(), profile.cluster.name, result, nothing_checked, versions);
  std::string written;
  if (vm->count("write") && !nothing_checked) written = write_new_version(store, profile, result, args);
  if (a.format == "json") {
    std::cout << result_json(result, file, written).dump(2) << "\n";
  } else {
    print_text(result, file);
    if (!written.empty())
      std::printf(
          "wrote %s without the %d rule(s) that no longer win\n", written.c_str(),
          result.count(calibrate::Verdict::no_longer_wins) + result.count(calibrate::Verdict::now_loses));
  }
  if (nothing_checked) {
    std::fprintf(
        stderr,
        "nccl-autotune verify: none of the %zu rules could be checked (%llu measurements): this is not "
        "a pass%s\n",
        result.rules.size(), static_cast<unsigned long long>(result.measurements),
        vm->count("write") ? "; no version written" : "");
    return kExitFailed;
  }
  return result.count(calibrate::Verdict::now_loses) > 0 ? kExitFailed : kExitOk;
}

}  // namespace autotune::cli
