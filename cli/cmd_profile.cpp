// nccl-autotune profile list | show | validate | diff | merge | export | import | compile: wiring over
// profiles/ (store, TOML, CSV, diff, merge, compiled rules). Output formatting only; every check lives in the
// module.

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "autotune/version.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/rule_json.hpp"
#include "common/atomic_file.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/utc_time.hpp"
#include "nccl/version.hpp"
#include "profiles/any_profile.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/nccl_csv.hpp"
#include "profiles/profile_diff.hpp"
#include "profiles/profile_merge.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "report/table_format.hpp"

namespace autotune::cli {
namespace {

namespace fs = std::filesystem;
using namespace autotune::profiles;

const char* kUsage =
    "nccl-autotune profile list | show NAME_OR_FILE | show --cluster NAME | validate FILE... | diff A B | "
    "merge A B [-o FILE] | "
    "export FILE --format "
    "nccl-csv|toml | import FILE [--name CLUSTER] [--nccl-version V] | compile FILE.toml   [--store DIR] "
    "[--format text|json]";

struct Common {
  std::string store;
  std::string format = "text";
  std::vector<std::string> args;
  std::string name, nccl_version, output, cluster;
};

std::optional<Common> parse(const std::string& sub, const Args& args) {
  CommandSpec spec;
  spec.usage = kUsage;
  spec.description =
      "Profiles live in a store directory ($NCCL_AUTOTUNE_STORE, else $XDG_DATA_HOME/nccl-autotune, else "
      "~/.local/share/nccl-autotune). NAME_OR_FILE is a profile file or a cluster name in the store. "
      "See docs/profiles.md.";
  Common c;
  spec.options.add_options()("store", po::value(&c.store), "profile store directory")(
      "format", po::value(&c.format), "text|json (list, show, diff); nccl-csv|toml (export)")(
      "name", po::value(&c.name), "import: cluster name (default: the file's stem, or the profile's own)")(
      "nccl-version", po::value(&c.nccl_version),
      "import: the NCCL version the rules are for (CSV: required "
      "unless the build's; TOML: replaces the profile's)")(
      "output,o", po::value(&c.output), "export, merge: write to this file (atomically) instead of stdout")(
      "cluster", po::value(&c.cluster),
      "show: the cluster's profile in the store (as run and explain take it)")("args", po::value(&c.args),
                                                                               "arguments");
  spec.positional.add("args", -1);
  auto vm = parse_command_line(spec, args);
  if (!vm) return std::nullopt;
  (void)sub;
  return c;
}

Store open_store(const Common& c) {
  return Store(c.store.empty() ? Store::default_dir() : fs::path(c.store));
}

void need_args(const Common& c, size_t min, size_t max, const std::string& what) {
  if (c.args.size() < min || c.args.size() > max)
    throw InputError("<arguments>", 0,
                     "expected " + what + "; found " + std::to_string(c.args.size()) +
                         " arguments (usage: " + kUsage + ")");
}

void check_format(const std::string& format, std::initializer_list<std::string_view> allowed) {
  for (auto a : allowed)
    if (format == a) return;
  std::string names;
  for (auto a : allowed) names += (names.empty() ? "" : "|") + std::string(a);
  throw InputError("<arguments>", 0, "--format: expected " + names + "; found \"" + format + "\"");
}

// A file that is there (read_profile refuses a FIFO or device with its reason), else a cluster in the store.
std::pair<Profile, fs::path> resolve(const Common& c, const std::string& name_or_file,
                                     bool name_only = false) {
  std::error_code ec;
  if (!name_only && fs::exists(name_or_file, ec) && !fs::is_directory(name_or_file, ec))
    return {read_profile(name_or_file), name_or_file};
  Store store = open_store(c);
  auto found = store.find_by_name(name_or_file);
  if (found.empty())
    throw InputError("<arguments>", 0,
                     "expected a profile file or a cluster name in the store " + store.dir().string() +
                         "; found \"" + name_or_file + "\"");
  // The store lists profiles as the plugin reads them (rules from their compiled form, without evidence):
  // what a person asks to see is the TOML itself.
  return {read_profile(found.front().file), found.front().file};
}

nlohmann::json profile_json(const Profile& p, const fs::path& file) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& r : p.rules) rules.push_back(rule_json(r));
  return {{"file", file.string()},
          {"cluster",
           {{"name", p.cluster.name},
            {"fingerprint", p.cluster.fingerprint},
            {"gpu_model", p.cluster.gpu_model},
            {"gpus_per_node", p.cluster.gpus_per_node},
            {"nodes", p.cluster.nodes},
            {"nics_per_node", p.cluster.nics_per_node}}},
          {"provenance",
           {{"created", p.provenance.created},
            {"tool_version", p.provenance.tool_version},
            {"nccl_version", p.provenance.nccl_version},
            {"source", name(p.provenance.source)},
            {"command", p.provenance.command},
            {"health", p.provenance.health},
            {"excluded_nodes", p.provenance.excluded_nodes},
            {"health_findings", p.provenance.health_findings}}},
          {"env", p.env},
          {"uncalibrated", p.uncalibrated == UncalibratedPolicy::nearest_scale ? "nearest" : "nccl"},
          {"constants", p.constants.size()},
          {"rules", rules}};
}

std::string fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void print_show(const Profile& p, const fs::path& file) {
  std::printf("profile     %s\n", file.c_str());
  std::printf("cluster     %s  fingerprint %s\n", p.cluster.name.c_str(),
              p.cluster.fingerprint.empty() ? "-" : p.cluster.fingerprint.c_str());
  std::printf("hardware    %d node(s) x %d GPU(s) %s, %d NIC(s) per node\n", p.cluster.nodes,
              p.cluster.gpus_per_node, p.cluster.gpu_model.c_str(), p.cluster.nics_per_node);
  const std::string modelled =
      from_model(p.provenance.source)
          ? "  (" + std::string(model_label(p.provenance.source)) + ": not measured on real GPUs)"
          : "";
  std::printf("source      %s%s\n", std::string(name(p.provenance.source)).c_str(), modelled.c_str());
  std::printf("created     %s by nccl-autotune %s for NCCL %s\n", p.provenance.created.c_str(),
              p.provenance.tool_version.c_str(), p.provenance.nccl_version.c_str());
  if (!p.provenance.health.empty()) std::printf("health      %s\n", p.provenance.health.c_str());
  for (const auto& n : p.provenance.excluded_nodes) std::printf("  excluded: %s\n", n.c_str());
  for (const auto& f : p.provenance.health_findings) std::printf("  %s\n", f.c_str());
  std::printf("policy      uncalibrated scales: %s\n", p.uncalibrated == UncalibratedPolicy::nearest_scale
                                                           ? "nearest calibrated scale"
                                                           : "NCCL decides");
  std::printf("env         %s\n", p.env.empty() ? "(none)" : "");
  // As the profile writes them (KEY = "value"): NCCL's exact-match prefix makes "=eth0" read as a doubled
  // '='.
  for (const auto& [k, v] : p.env) std::printf("  %s = \"%s\"\n", k.c_str(), v.c_str());
  if (!p.constants.empty())
    std::printf("constants   %zu override(s) of NCCL's tuner constants\n", p.constants.size());
  std::printf("rules       %zu\n", p.rules.size());
  if (p.rules.empty()) return;
  Profile sorted = parse_profile(format_profile(p), file.string());  // the canonical order
  std::printf("  %-13s %-6s %-6s %-10s %-10s %-13s %-8s %-8s %9s %9s %7s %-22s %s\n", "collective", "nodes",
              "ranks", "from", "to", "algorithm", "protocol", "channels", "busbw", "default", "gain",
              "interval", "evidence");
  for (const auto& r : sorted.rules) {
    std::string busbw = r.busbw_gbps ? fixed(*r.busbw_gbps, 1) : "-";
    std::string def = r.default_busbw_gbps ? fixed(*r.default_busbw_gbps, 1) : "-";
    std::string evidence = r.gain ? std::to_string(r.gain->sizes) + " size(s), " +
                                        std::to_string(r.samples.value_or(0)) + "/" +
                                        std::to_string(r.gain->default_samples) + " samples"
                           : r.samples ? std::to_string(*r.samples) + " samples"
                                       : "-";
    if (r.basis) evidence += std::string(evidence == "-" ? "" : ", ") + std::string(name(*r.basis));
    std::printf("  %-13s %-6s %-6s %-10s %-10s %-13s %-8s %-8s %9s %9s %7s %-22s %s\n",
                std::string(name(r.collective)).c_str(), format_count_range(r.nodes).c_str(),
                format_count_range(r.ranks).c_str(), human_byte_size(r.min_bytes).c_str(),
                human_byte_size(r.max_bytes).c_str(), std::string(name(r.algorithm)).c_str(),
                std::string(name(r.protocol)).c_str(),
                r.channels == 0 ? "auto" : std::to_string(r.channels).c_str(), busbw.c_str(), def.c_str(),
                report::format_rule_gain(r).c_str(), report::format_gain_interval(r).c_str(),
                evidence.c_str());
  }
  std::printf(
      "  (busbw and default in GB/s at the range's largest measured size; gain = NCCL's default time / the "
      "rule's time - 1, over the measured sizes; samples = the rule's / the default's timed repetitions; "
      "predicted: from the cost model fitted to smaller "
      "scales, confirmed: predicted and checked by measuring some of its sizes)\n");
}

int do_list(const Common& c) {
  check_format(c.format, {"text", "json"});
  need_args(c, 0, 0, "no arguments");
  Store store = open_store(c);
  auto entries = store.list();
  if (c.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : entries) {
      if (e.profile)
        out.push_back({{"file", e.file.string()},
                       {"cluster", e.profile->cluster.name},
                       {"fingerprint", e.profile->cluster.fingerprint},
                       {"nccl_version", e.profile->provenance.nccl_version},
                       {"source", name(e.profile->provenance.source)},
                       {"created", e.profile->provenance.created},
                       {"rules", e.profile->rules.size()}});
      else
        out.push_back({{"file", e.file.string()}, {"error", e.error}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("store %s: %zu profile file(s)\n", store.dir().c_str(), entries.size());
  for (const auto& e : entries) {
    if (!e.profile) {
      std::printf("  %-32s UNREADABLE: %s\n", e.file.filename().c_str(), e.error.c_str());
      continue;
    }
    std::printf("  %-32s %-20s NCCL %-8s %-9s %5zu rules  %s\n", e.file.filename().c_str(),
                e.profile->cluster.name.c_str(), e.profile->provenance.nccl_version.c_str(),
                std::string(name(e.profile->provenance.source)).c_str(), e.profile->rules.size(),
                e.profile->provenance.created.c_str());
  }
  return kExitOk;
}

int do_validate(const Common& c) {
  need_args(c, 1, 1u << 20, "one or more profile files");
  int status = kExitOk;
  for (const auto& f : c.args) {
    try {
      Profile p = read_profile(f);
      std::printf("%s: ok (%zu rules, %zu env, source %s)\n", f.c_str(), p.rules.size(), p.env.size(),
                  std::string(name(p.provenance.source)).c_str());
    } catch (const InputError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      status = kExitBadInput;
    }
  }
  return status;
}

int do_diff(const Common& c) {
  check_format(c.format, {"text", "json"});
  need_args(c, 2, 2, "two profiles: A B");
  auto [a, fa] = resolve(c, c.args[0]);
  auto [b, fb] = resolve(c, c.args[1]);
  ProfileDiff d = diff_profiles(a, b);
  if (c.format == "json") {
    nlohmann::json j = {{"a", fa.string()}, {"b", fb.string()}};
    j["added"] = nlohmann::json::array();
    j["removed"] = nlohmann::json::array();
    j["changed"] = nlohmann::json::array();
    j["env"] = nlohmann::json::array();
    for (const auto& r : d.added) j["added"].push_back(rule_json(r));
    for (const auto& r : d.removed) j["removed"].push_back(rule_json(r));
    for (const auto& ch : d.changed)
      j["changed"].push_back({{"before", rule_json(ch.before)}, {"after", rule_json(ch.after)}});
    for (const auto& e : d.env)
      j["env"].push_back({{"key", e.key}, {"before", e.before}, {"after", e.after}});
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("--- %s\n+++ %s\n", fa.c_str(), fb.c_str());
  if (d.empty()) std::printf("no differences in rules or env\n");
  for (const auto& e : d.env) {
    if (!e.before.empty()) std::printf("- env %s = \"%s\"\n", e.key.c_str(), e.before.c_str());
    if (!e.after.empty()) std::printf("+ env %s = \"%s\"\n", e.key.c_str(), e.after.c_str());
  }
  for (const auto& r : d.removed) std::printf("- rule %s\n", describe_rule_choice(r).c_str());
  for (const auto& r : d.added) std::printf("+ rule %s\n", describe_rule_choice(r).c_str());
  for (const auto& ch : d.changed)
    std::printf("~ rule %s\n    now %s/%s channels %s\n", describe_rule_choice(ch.before).c_str(),
                std::string(name(ch.after.algorithm)).c_str(), std::string(name(ch.after.protocol)).c_str(),
                ch.after.channels == 0 ? "auto" : std::to_string(ch.after.channels).c_str());
  return kExitOk;
}

int do_export(const Common& c) {
  check_format(c.format, {"nccl-csv", "toml"});
  need_args(c, 1, 1, "one profile file or cluster name");
  auto [p, file] = resolve(c, c.args[0]);
  std::string text;
  try {
    text = c.format == "toml" ? format_profile(p) : format_nccl_csv(p.rules);
  } catch (const InputError& e) {
    throw InputError(file.string(), e.line(), e.message());
  }
  if (c.output.empty())
    std::cout << text;
  else
    write_file_atomically(c.output, text);
  return kExitOk;
}

int do_import(const Common& c) {
  need_args(c, 1, 1, "one file (NCCL's example-plugin CSV, such as nccl_tuner.conf, or a .toml profile)");
  fs::path in = c.args[0];
  Profile p;
  std::vector<CsvSkipped> dropped;
  // Told apart as the plugin tells them apart (NCCL's own example file is nccl_tuner.conf), by content.
  const std::string text = read_file(in, kProfileInput);
  if (in.extension() == ".csv" || (in.extension() != ".toml" && looks_like_nccl_csv(text))) {
    p.rules = parse_nccl_csv(text, in.string());
    // Lines NCCL never runs (broadcast with tree) are valid in NCCL's example format, where they never
    // apply; a TOML profile cannot hold them. Said once the rest is known to import (bad input gets one
    // line).
    dropped = drop_combinations_nccl_never_runs(p.rules);
    p.cluster.name = c.name.empty() ? in.stem().string() : c.name;
    p.provenance.created = utc_timestamp_now();
    p.provenance.tool_version = kToolVersion;
    p.provenance.source = Source::imported;
    p.provenance.command = "nccl-autotune profile import " + in.string();
    p.provenance.nccl_version = c.nccl_version;
    if (p.provenance.nccl_version.empty())
      if (auto built = nccl::Version::from_code(kBuiltNcclVersion)) p.provenance.nccl_version = built->text();
    if (p.provenance.nccl_version.empty())
      throw InputError("<arguments>", 0,
                       "--nccl-version: expected the NCCL version these rules are for; found none");
    validate_profile(p, in.string());
  } else {
    p = parse_profile(text, in.string());
    if (!c.name.empty()) p.cluster.name = c.name;
    // The rules were calibrated for the version the profile says unless the importer knows better: the
    // store files the profile under the version, and the plugin applies it only to that NCCL.
    if (!c.nccl_version.empty()) p.provenance.nccl_version = c.nccl_version;
    validate_profile(p, in.string());
  }
  fs::path saved = open_store(c).save(p);
  for (const auto& d : dropped)
    std::fprintf(stderr, "nccl-autotune profile import: %s:%d: line skipped: %s\n", in.c_str(), d.line,
                 d.message.c_str());
  std::printf("imported %zu rules into %s\n", p.rules.size(), saved.c_str());
  return kExitOk;
}

// Two calibrations of one cluster (shapes calibrated apart) as one profile; every check is merge_profiles'.
int do_merge(const Common& c) {
  need_args(c, 2, 2, "two profiles: A B");
  auto [a, fa] = resolve(c, c.args[0]);
  auto [b, fb] = resolve(c, c.args[1]);
  Profile merged = merge_profiles({a, fa.string()}, {b, fb.string()});
  merged.provenance.created = utc_timestamp_now();
  merged.provenance.tool_version = kToolVersion;
  merged.provenance.command = "nccl-autotune profile merge " + fa.string() + " " + fb.string();
  const size_t joined = a.rules.size() + b.rules.size() - merged.rules.size();
  if (c.output.empty()) {
    std::cout << format_profile(merged);
    return kExitOk;
  }
  write_profile(c.output, merged);
  std::printf("merged %zu + %zu rules (%zu held by both) into %s\n", a.rules.size(), b.rules.size(), joined,
              c.output.c_str());
  return kExitOk;
}

// For profiles kept outside a store (which writes its own): FILE.toml.rules beside FILE.toml, so the
// plugin's init skips parsing the rules. Compiled from the text as read, so it matches that text exactly.
int do_compile(const Common& c) {
  need_args(c, 1, 1, "one TOML profile file");
  const fs::path in = c.args[0];
  const std::string text = read_file(in, kProfileInput);
  const Profile p = parse_profile(text, in.string());
  write_compiled_rules(in, p, text);
  std::printf("compiled %zu rules into %s\n", p.rules.size(), compiled_rules_path(in).c_str());
  return kExitOk;
}

}  // namespace

int cmd_profile(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    CommandSpec spec;
    spec.usage = kUsage;
    if (args.empty())
      throw InputError("<arguments>", 0,
                       std::string("expected a subcommand; found none (usage: ") + kUsage + ")");
    std::cout << "usage: " << kUsage
              << "\n\nSee `nccl-autotune profile SUBCOMMAND --help` and docs/profiles.md.\n";
    return kExitOk;
  }
  std::string sub = args[0];
  Args rest(args.begin() + 1, args.end());
  auto c = parse(sub, rest);
  if (!c) return kExitOk;
  if (sub == "list") return do_list(*c);
  if (sub == "validate") return do_validate(*c);
  if (sub == "diff") return do_diff(*c);
  if (sub == "merge") return do_merge(*c);
  if (sub == "export") return do_export(*c);
  if (sub == "import") return do_import(*c);
  if (sub == "compile") return do_compile(*c);
  if (sub == "show") {
    check_format(c->format, {"text", "json"});
    need_args(*c, c->cluster.empty() ? 1 : 0, c->cluster.empty() ? 1 : 0,
              c->cluster.empty() ? "one profile file or cluster name" : "--cluster NAME alone");
    auto [p, file] =
        c->cluster.empty() ? resolve(*c, c->args[0]) : resolve(*c, c->cluster, /*name_only=*/true);
    if (c->format == "json")
      std::cout << profile_json(p, file).dump(2) << "\n";
    else
      print_show(p, file);
    return kExitOk;
  }
  throw InputError(
      "<arguments>", 0,
      "expected one of list, show, validate, diff, merge, export, import, compile; found \"" + sub + "\"");
}

}  // namespace autotune::cli
