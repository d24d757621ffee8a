// Reading a profile: TOML through toml++, then every key checked (profile_checks.hpp); the writer is
// profile_writer.cpp.
#include <toml++/toml.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/name_table.hpp"
#include "common/text.hpp"
#include "nccl/chunk_size.hpp"
#include "nccl/env_policy.hpp"
#include "nccl/tuner_constants.hpp"
#include "profiles/profile_checks.hpp"
#include "profiles/profile_toml.hpp"

namespace autotune::profiles {

using namespace checks;
using nccl::constant_index_names;
using nccl::constant_tables;
using nccl::ConstantTable;
using nccl::find_constant_table;
using nccl::kMaxChannels;
using nccl::parse_algorithm;
using nccl::parse_collective;
using nccl::parse_constant_index;
using nccl::parse_protocol;

std::optional<Rule::RunnerUp> parse_runner_up(std::string_view text) {
  const size_t a = text.find('/');
  const size_t b = a == std::string_view::npos ? a : text.find('/', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  auto algo = parse_algorithm(text.substr(0, a));
  auto proto = parse_protocol(text.substr(a + 1, b - a - 1));
  const std::string_view ch = text.substr(b + 1);
  if (!algo || !proto || ch.empty() || ch.size() > 2) return std::nullopt;
  int channels = 0;
  for (char c : ch) {
    if (c < '0' || c > '9') return std::nullopt;
    channels = channels * 10 + (c - '0');
  }
  if (channels > kMaxChannels) return std::nullopt;
  return Rule::RunnerUp{*algo, *proto, channels, 0.0};
}

namespace {

int line_of(const toml::node& n) {
  return static_cast<int>(n.source().begin.line);
}

std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "string " + in_quotes(n.as_string()->get());
    case toml::node_type::integer:
      return "integer " + std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point:
      return "float " + format_double(n.as_floating_point()->get());
    case toml::node_type::boolean:
      return n.as_boolean()->get() ? "boolean true" : "boolean false";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    default:
      return "a date or time";
  }
}

class Reader {
 public:
  explicit Reader(std::string_view file) : w_{file} {}

  // runner_up = "algorithm/protocol/channels" with runner_up_busbw_gbps beside it (both or neither).
  std::optional<Rule::RunnerUp> read_runner_up(const toml::node* text, const toml::node* busbw,
                                               size_t index) {
    if (!text && !busbw) return std::nullopt;
    if (!text || !busbw)
      w_.fail(text ? line_of(*text) : line_of(*busbw),
              KeyRef(index, text ? "runner_up_busbw_gbps" : "runner_up"),
              "expected runner_up and runner_up_busbw_gbps together; found only one of them");
    if (!text->is_string())
      w_.fail(line_of(*text), KeyRef(index, "runner_up"),
              "expected \"algorithm/protocol/channels\" (\"tree/ll/8\"); found " + describe(*text));
    auto parsed = parse_runner_up(text->as_string()->get());
    if (!parsed)
      w_.fail(line_of(*text), KeyRef(index, "runner_up"),
              "expected \"algorithm/protocol/channels\" (\"tree/ll/8\", channels 0..64); found " +
                  in_quotes(text->as_string()->get()));
    if (!busbw->is_number())
      w_.fail(line_of(*busbw), KeyRef(index, "runner_up_busbw_gbps"),
              "expected a number; found " + describe(*busbw));
    parsed->busbw_gbps = busbw->is_integer() ? static_cast<double>(busbw->as_integer()->get())
                                             : busbw->as_floating_point()->get();
    return parsed;
  }

  // basis = "confirmed" | "predicted" (absent: measured).
  std::optional<RuleBasis> read_basis(const toml::node* n, size_t index) {
    if (!n) return std::nullopt;
    auto b = n->is_string() ? parse_rule_basis(n->as_string()->get()) : std::nullopt;
    if (!b)
      w_.fail(line_of(*n), KeyRef(index, "basis"),
              "expected \"confirmed\" or \"predicted\" (absent: measured); found " + describe(*n));
    return b;
  }

  // [online] telemetry = true|false, explore = 0..0.5 (a fraction of calls).
  void read_online(Profile& p, const toml::node& node) {
    const toml::table* t = node.as_table();
    if (!t) w_.fail(line_of(node), "online", "expected a table [online]; found " + describe(node));
    check_keys(*t, "online.", {"telemetry", "explore"}, line_of(*t));
    OnlineSettings o;
    if (const toml::node* n = t->get("telemetry")) {
      if (!n->is_boolean())
        w_.fail(line_of(*n), "online.telemetry", "expected true or false; found " + describe(*n));
      o.telemetry = n->as_boolean()->get();
    }
    if (const toml::node* n = t->get("explore")) {
      if (!n->is_number())
        w_.fail(line_of(*n), "online.explore",
                "expected a fraction of calls 0..0.5 (0.01 = one call in a hundred); found " + describe(*n));
      o.explore =
          n->is_integer() ? static_cast<double>(n->as_integer()->get()) : n->as_floating_point()->get();
      if (!(o.explore >= 0.0 && o.explore <= kMaxExplore))
        w_.fail(line_of(*n), "online.explore",
                "expected a fraction of calls 0..0.5 (0.01 = one call in a hundred); found " +
                    format_double(o.explore));
    }
    p.online = o;
  }

  // [layout] parallelism = "tp=2,ep=8,pp=2" and a [[layout.group]] per kind of communicator.
  void read_layout(Profile& p, const toml::node& node) {
    const toml::table* t = node.as_table();
    if (!t) w_.fail(line_of(node), "layout", "expected a table [layout]; found " + describe(node));
    check_keys(*t, "layout.", {"parallelism", "group", "p2p_env"}, line_of(*t));
    JobLayout l;
    l.parallelism = string(*t, "layout.", "parallelism", true);
    l.p2p_env = strings(*t, "layout.", "p2p_env");
    for (const auto& name : l.p2p_env)
      if (!nccl::is_point_to_point_env_key(name))
        w_.fail(key_line(*t, "p2p_env"), "layout.p2p_env",
                "expected point-to-point settings such as NCCL_P2P_NET_CHUNKSIZE; found " + in_quotes(name));
    const toml::node* groups = t->get("group");
    const toml::array* a = groups ? groups->as_array() : nullptr;
    if (!a || !a->is_array_of_tables())
      w_.fail(groups ? line_of(*groups) : line_of(*t), "layout.group",
              "expected [[layout.group]] tables; found " + (groups ? describe(*groups) : "none"));
    for (size_t i = 0; i < a->size(); ++i) {
      const toml::table& g = *(*a)[i].as_table();
      const std::string prefix = "layout.group[" + std::to_string(i + 1) + "].";
      check_keys(g, prefix, {"kind", "nodes", "ranks", "groups", "operations"}, line_of(g));
      auto n = [&](std::string_view key) { return count(g, prefix, key); };
      LayoutGroup group{string(g, prefix, "kind", true), n("nodes"), n("ranks"), n("groups"), {}};
      for (const auto& name : strings(g, prefix, "operations")) {
        auto op = nccl::parse_operation(name);
        if (!op)
          w_.fail(key_line(g, "operations"), prefix + "operations",
                  "expected operations such as allreduce or alltoall; found " + in_quotes(name));
        group.operations.push_back(*op);
      }
      if (auto problem = layout_problem(group))
        w_.fail(line_of(g), prefix.substr(0, prefix.size() - 1), *problem);
      l.groups.push_back(std::move(group));
    }
    p.layout = std::move(l);
  }

  Profile read(const toml::table& root) {
    Profile p;
    check_keys(root, "",
               {"schema", "cluster", "provenance", "env", "policy", "online", "layout", "constants", "rule"},
               1);
    read_origin(root, p);
    if (const toml::node* env = root.get("env")) read_env(p, *env);
    buffers_ = nccl::buffer_sizes(p.env);
    if (const toml::node* policy = root.get("policy")) read_policy(p, *policy);
    if (const toml::node* online = root.get("online")) read_online(p, *online);
    if (const toml::node* layout = root.get("layout")) read_layout(p, *layout);
    if (const toml::node* constants = root.get("constants")) {
      const toml::table* t = constants->as_table();
      if (!t)
        w_.fail(line_of(*constants), "constants",
                "expected a table [constants]; found " + describe(*constants));
      for (auto&& [k, v] : *t) read_constant_table(p, std::string(k.str()), v);
    }
    if (const toml::node* rules = root.get("rule")) {
      const toml::array* a = rules->as_array();
      if (!a || !a->is_array_of_tables())
        w_.fail(line_of(*rules), "rule", "expected [[rule]] tables; found " + describe(*rules));
      if (a->size() > kMaxRules)
        w_.fail(
            line_of(*(*a)[kMaxRules].as_table()), "rule",
            "expected at most " + std::to_string(kMaxRules) + " rules; found " + std::to_string(a->size()));
      p.rules.reserve(a->size());
      for (size_t i = 0; i < a->size(); ++i) p.rules.push_back(read_rule(*(*a)[i].as_table(), i));
    }
    check_overlaps(w_, p.rules);
    return p;
  }

 private:
  // schema, [cluster] and [provenance].
  void read_origin(const toml::table& root, Profile& p) {
    const toml::node* schema = root.get("schema");
    if (!schema) w_.fail(1, "schema", "expected schema = 1 at the top of the file; found no such key");
    p.schema = static_cast<int>(integer(*schema, std::string("schema")));
    if (p.schema > kSchemaVersion)
      w_.fail(line_of(*schema), "schema",
              "written by a newer nccl-autotune: schema " + std::to_string(p.schema) +
                  ", this version reads " + std::to_string(kSchemaVersion));
    if (p.schema < 1) w_.fail(line_of(*schema), "schema", "expected 1; found " + std::to_string(p.schema));

    const toml::table& cluster = table(root, "cluster", 1);
    int cluster_line = line_of(cluster);
    check_keys(
        cluster, "cluster.",
        {"name", "fingerprint", "fingerprint_facts", "gpu_model", "gpus_per_node", "nodes", "nics_per_node"},
        cluster_line);
    p.cluster.name = string(cluster, "cluster.", "name", true);
    p.cluster.fingerprint = string(cluster, "cluster.", "fingerprint", false);
    p.cluster.fingerprint_facts = strings(cluster, "cluster.", "fingerprint_facts");
    p.cluster.gpu_model = string(cluster, "cluster.", "gpu_model", false);
    p.cluster.gpus_per_node = count(cluster, "cluster.", "gpus_per_node");
    p.cluster.nodes = count(cluster, "cluster.", "nodes");
    p.cluster.nics_per_node = count(cluster, "cluster.", "nics_per_node");
    check_cluster(w_, p.cluster, key_line(cluster, "name"));

    const toml::table& prov = table(root, "provenance", 1);
    check_keys(prov, "provenance.",
               {"created", "tool_version", "nccl_version", "source", "command", "health", "excluded_nodes",
                "health_findings"},
               line_of(prov));
    p.provenance.created = created(prov);
    p.provenance.tool_version = string(prov, "provenance.", "tool_version", false);
    p.provenance.nccl_version = string(prov, "provenance.", "nccl_version", true);
    std::string source = string(prov, "provenance.", "source", true);
    auto src = parse_source(source);
    if (!src)
      w_.fail(key_line(prov, "source"), "provenance.source",
              "expected one of measured, simulated, imported, standin; found " + in_quotes(source));
    p.provenance.source = *src;
    p.provenance.command = string(prov, "provenance.", "command", false);
    p.provenance.health = string(prov, "provenance.", "health", false);
    p.provenance.excluded_nodes = strings(prov, "provenance.", "excluded_nodes");
    p.provenance.health_findings = strings(prov, "provenance.", "health_findings");
    check_provenance(w_, p.provenance, key_line(prov, "created"), key_line(prov, "nccl_version"));
  }

  // [env]: each entry against NCCL's allowlist, then what no single entry shows.
  void read_env(Profile& p, const toml::node& env) {
    const toml::table* t = env.as_table();
    if (!t) w_.fail(line_of(env), "env", "expected a table [env]; found " + describe(env));
    for (auto&& [k, v] : *t) {
      std::string key(k.str());
      if (!v.is_string())
        w_.fail(line_of(v), "env." + printable(key),
                "expected a string (NCCL reads text: \"1\"); found " + describe(v));
      std::string value = v.as_string()->get();
      check_env(w_, key, value, line_of(v));
      p.env[key] = value;
    }
    if (const auto problem = nccl::env_set_problem(p.env)) {
      // The line of the key the problem blames; the table's where that key is not written as such.
      const toml::node* blamed = t->get(problem->key);
      w_.fail(blamed ? line_of(*blamed) : line_of(*t), "env", problem->message);
    }
  }

  // [policy]: what a job does where no rule applies, and under another NCCL.
  void read_policy(Profile& p, const toml::node& policy) {
    const toml::table* t = policy.as_table();
    if (!t) w_.fail(line_of(policy), "policy", "expected a table [policy]; found " + describe(policy));
    check_keys(*t, "policy.", {"uncalibrated", "other_nccl"}, line_of(*t));
    if (t->get("uncalibrated")) {
      std::string u = string(*t, "policy.", "uncalibrated", true);
      if (u == "nccl")
        p.uncalibrated = UncalibratedPolicy::nccl_decides;
      else if (u == "nearest")
        p.uncalibrated = UncalibratedPolicy::nearest_scale;
      else
        w_.fail(key_line(*t, "uncalibrated"), "policy.uncalibrated",
                "expected \"nccl\" or \"nearest\"; found " + in_quotes(u));
    }
    if (t->get("other_nccl")) {
      std::string v = string(*t, "policy.", "other_nccl", true);
      if (v != "refuse" && v != "apply")
        w_.fail(key_line(*t, "other_nccl"), "policy.other_nccl",
                "expected \"refuse\" or \"apply\" (rules under an NCCL of another major.minor); found " +
                    in_quotes(v));
      p.apply_under_other_nccl = v == "apply";
    }
  }

 private:
  Where w_;
  nccl::BufferSizes buffers_;  // what the profile's [env] gives NCCL's buffers, for chunk_bytes

  void check_keys(const toml::table& t, const std::string& prefix,
                  std::initializer_list<std::string_view> allowed, int fallback_line) {
    for (auto&& [k, v] : t) {
      if (std::find(allowed.begin(), allowed.end(), k.str()) != allowed.end()) continue;
      unknown_key(k, prefix, allowed, fallback_line);
    }
  }

  template <class Names>
  [[noreturn]] void unknown_key(const toml::key& k, const std::string& prefix, const Names& allowed,
                                int fallback_line) {
    int line = k.source().begin.line ? static_cast<int>(k.source().begin.line) : fallback_line;
    w_.fail(line, prefix + printable(k.str()),
            "expected one of " + join_names(allowed) + "; found an unknown key");
  }

  int key_line(const toml::table& t, std::string_view key) {
    const toml::node* n = t.get(key);
    return n ? line_of(*n) : line_of(t);
  }

  const toml::table& table(const toml::table& root, const std::string& key, int line) {
    const toml::node* n = root.get(key);
    if (!n) w_.fail(line, key, "expected a table [" + key + "]; found no such table");
    if (!n->is_table()) w_.fail(line_of(*n), key, "expected a table [" + key + "]; found " + describe(*n));
    return *n->as_table();
  }

  int64_t integer(const toml::node& n, const KeyRef& key) {
    if (!n.is_integer()) w_.fail(line_of(n), key, "expected an integer; found " + describe(n));
    return n.as_integer()->get();
  }

  std::string string(const toml::table& t, const std::string& prefix, std::string_view key, bool required) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required)
        w_.fail(line_of(t), prefix + std::string(key),
                "expected a string; found no such key (it is required)");
      return "";
    }
    if (!n->is_string())
      w_.fail(line_of(*n), prefix + std::string(key), "expected a string; found " + describe(*n));
    return n->as_string()->get();
  }

  // An optional array of strings.
  std::vector<std::string> strings(const toml::table& t, const std::string& prefix, std::string_view key) {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a)
      w_.fail(line_of(*n), prefix + std::string(key), "expected an array of strings; found " + describe(*n));
    for (const toml::node& item : *a) {
      if (!item.is_string())
        w_.fail(line_of(item), prefix + std::string(key),
                "expected an array of strings; found " + describe(item));
      out.push_back(item.as_string()->get());
    }
    return out;
  }

  int count(const toml::table& t, const std::string& prefix, std::string_view key) {
    const toml::node* n = t.get(key);
    if (!n) return 0;
    int64_t v = integer(*n, prefix + std::string(key));
    if (v < 0 || v > 1'000'000)
      w_.fail(line_of(*n), prefix + std::string(key),
              "expected an integer 0..1000000; found " + std::to_string(v));
    return static_cast<int>(v);
  }

  std::string created(const toml::table& prov) {
    const toml::node* n = prov.get("created");
    if (n && n->is_date_time()) {
      std::ostringstream out;
      out << *n->as_date_time();
      return out.str();
    }
    return string(prov, "provenance.", "created", true);
  }

  void read_constant_table(Profile& p, const std::string& table_name, const toml::node& node) {
    const ConstantTable* t = find_constant_table(table_name);
    if (!t) {
      std::string names;
      for (const auto& tt : constant_tables()) names += (names.empty() ? "" : ", ") + std::string(tt.name);
      w_.fail(line_of(node), "constants." + table_name,
              "expected one of " + names + "; found an unknown table");
    }
    std::vector<int> index;
    walk_constant(p, *t, "constants." + table_name, node, index);
  }

  void walk_constant(Profile& p, const ConstantTable& t, const std::string& key, const toml::node& node,
                     std::vector<int>& index) {
    size_t depth = index.size();
    if (depth == t.indices.size()) {
      if (!node.is_number()) w_.fail(line_of(node), key, "expected a number; found " + describe(node));
      ConstantOverride c;
      c.table = std::string(t.name);
      c.index = index;
      c.value =
          node.is_integer() ? static_cast<double>(node.as_integer()->get()) : node.as_floating_point()->get();
      c.source_line = line_of(node);
      check_constant(w_, c);
      p.constants.push_back(std::move(c));
      return;
    }
    const toml::table* sub = node.as_table();
    if (!sub)
      w_.fail(line_of(node), key,
              "expected " + std::to_string(t.indices.size() - depth) + " more index names (" +
                  constant_index_names(t.indices[depth]) + "); found " + describe(node));
    for (auto&& [k, v] : *sub) {
      auto i = parse_constant_index(t.indices[depth], k.str());
      if (!i)
        w_.fail(
            line_of(v), key + "." + std::string(k.str()),
            "expected one of " + constant_index_names(t.indices[depth]) + "; found " + in_quotes(k.str()));
      index.push_back(*i);
      walk_constant(p, t, key + "." + std::string(k.str()), v, index);
      index.pop_back();
    }
  }

  uint64_t byte_size(const toml::node& n, const KeyRef& key) {
    if (n.is_integer()) {
      int64_t v = n.as_integer()->get();
      if (v < 0) w_.fail(line_of(n), key, "expected a size >= 0; found " + std::to_string(v));
      return static_cast<uint64_t>(v);
    }
    if (n.is_string()) {
      const std::string& s = n.as_string()->get();
      if (auto v = parse_byte_size(s)) return *v;
    }
    w_.fail(line_of(n), key,
            "expected a byte count or a size such as \"64K\", \"1M\", \"8G\"; found " + describe(n));
  }

  std::optional<CountRange> count_range(const toml::node& n, const KeyRef& key) {
    auto bad = [&]() {
      w_.fail(line_of(n), key,
              "expected a count >= 1 or a range such as \"2-8\" or \"16+\"; found " + describe(n));
    };
    if (n.is_integer()) {
      int64_t v = n.as_integer()->get();
      if (v < 1 || v > std::numeric_limits<int>::max()) bad();
      return CountRange{static_cast<int>(v), static_cast<int>(v)};
    }
    if (!n.is_string()) bad();
    std::string_view s = n.as_string()->get();
    auto number = [&](std::string_view t) -> int {
      if (t.empty() || t.size() > 9) bad();
      int v = 0;
      for (char c : t) {
        if (c < '0' || c > '9') bad();
        v = v * 10 + (c - '0');
      }
      return v;
    };
    CountRange r;
    if (!s.empty() && s.back() == '+') {
      r.min = number(s.substr(0, s.size() - 1));
    } else if (size_t dash = s.find('-'); dash != std::string_view::npos) {
      r.min = number(s.substr(0, dash));
      r.max = number(s.substr(dash + 1));
    } else {
      r.min = r.max = number(s);
    }
    if (r.min < 1 || r.min > r.max) bad();
    return r;
  }

  // A rule's keys, in the order a rule's fields are read.
  enum Field : size_t {
    kCollective,
    kMinBytes,
    kMaxBytes,
    kAlgorithm,
    kProtocol,
    kChannels,
    kNodes,
    kRanks,
    kRanksPerNode,
    kBusbw,
    kDefaultBusbw,
    kSamples,
    kPipeOps,
    kRegBuff,
    kChunkBytes,
    kGain,  // kGain .. kDefaultSamples: the gain's evidence, all or none
    kGainLow,
    kGainHigh,
    kConfidence,
    kSizes,
    kDefaultSamples,
    kRunnerUp,  // with kRunnerUpBusbw: both or neither
    kRunnerUpBusbw,
    kBasis,
    kFieldCount
  };
  static constexpr std::array<std::string_view, kFieldCount> kNames = {"collective",
                                                                       "min_bytes",
                                                                       "max_bytes",
                                                                       "algorithm",
                                                                       "protocol",
                                                                       "channels",
                                                                       "nodes",
                                                                       "ranks",
                                                                       "ranks_per_node",
                                                                       "busbw_gbps",
                                                                       "default_busbw_gbps",
                                                                       "samples",
                                                                       "pipe_ops",
                                                                       "reg_buff",
                                                                       "chunk_bytes",
                                                                       "gain",
                                                                       "gain_low",
                                                                       "gain_high",
                                                                       "confidence",
                                                                       "sizes",
                                                                       "default_samples",
                                                                       "runner_up",
                                                                       "runner_up_busbw_gbps",
                                                                       "basis"};
  using RuleFields = std::array<const toml::node*, kFieldCount>;

  std::optional<double> number(const RuleFields& field, Field f, size_t index, RuleLines& lines) {
    const toml::node* n = field[f];
    if (!n) return std::nullopt;
    lines.evidence = line_of(*n);
    if (!n->is_number())
      w_.fail(line_of(*n), KeyRef(index, kNames[f]), "expected a number; found " + describe(*n));
    return n->is_integer() ? static_cast<double>(n->as_integer()->get()) : n->as_floating_point()->get();
  }

  std::optional<int> positive(const RuleFields& field, Field f, size_t index, RuleLines& lines) {
    const toml::node* n = field[f];
    if (!n) return std::nullopt;
    lines.evidence = line_of(*n);
    int64_t v = integer(*n, KeyRef(index, kNames[f]));
    if (v < 1 || v > std::numeric_limits<int>::max())
      w_.fail(line_of(*n), KeyRef(index, kNames[f]), "expected an integer >= 1; found " + std::to_string(v));
    return static_cast<int>(v);
  }

  std::optional<GainEvidence> gain_evidence(const RuleFields& field, size_t index, RuleLines& lines) {
    size_t present = 0;
    for (size_t f = kGain; f <= kDefaultSamples; ++f) present += field[f] != nullptr;
    if (present == 0) return std::nullopt;
    for (size_t f = kGain; f <= kDefaultSamples; ++f)
      if (!field[f])
        w_.fail(lines.header, KeyRef(index, kNames[f]),
                "expected a value: a rule's gain evidence has all of gain, gain_low, gain_high, confidence, "
                "sizes and default_samples, or none; found no such key");
    GainEvidence g;
    g.gain = *number(field, kGain, index, lines);
    g.low = *number(field, kGainLow, index, lines);
    g.high = *number(field, kGainHigh, index, lines);
    g.confidence = *number(field, kConfidence, index, lines);
    g.sizes = *positive(field, kSizes, index, lines);
    g.default_samples = *positive(field, kDefaultSamples, index, lines);
    return g;
  }

  // Per rule, the reader's own work is a small part of the load (toml++'s parse is the rest): one pass over
  // the rule's keys finds every field and rejects unknown keys (as check_keys does, in the same order), and
  // no key text is built unless a message needs it.
  Rule read_rule(const toml::table& t, size_t index) {
    RuleLines lines;
    lines.header = line_of(t);
    RuleFields field{};
    for (auto&& [k, v] : t) {
      const size_t i = static_cast<size_t>(std::find(kNames.begin(), kNames.end(), k.str()) - kNames.begin());
      if (i == kFieldCount) unknown_key(k, rule_key(index) + ".", kNames, lines.header);
      field[i] = &v;
    }
    Rule r;
    r.source_line = lines.header;
    read_choice(field, index, lines, r);
    read_scope(field, index, lines, r);
    r.busbw_gbps = number(field, kBusbw, index, lines);
    r.default_busbw_gbps = number(field, kDefaultBusbw, index, lines);
    r.samples = positive(field, kSamples, index, lines);
    r.gain = gain_evidence(field, index, lines);
    if (!lines.evidence) lines.evidence = lines.header;
    r.runner_up = read_runner_up(field[kRunnerUp], field[kRunnerUpBusbw], index);
    if (field[kRunnerUp]) lines.runner_up = line_of(*field[kRunnerUp]);
    r.basis = read_basis(field[kBasis], index);
    check_rule(w_, r, index, lines, buffers_);
    return r;
  }

  // The rule's collective, byte range, algorithm and protocol (all required), and its channels.
  void read_choice(const RuleFields& field, size_t index, RuleLines& lines, Rule& r) {
    auto required = [&](Field f) -> const toml::node& {
      if (!field[f])
        w_.fail(lines.header, KeyRef(index, kNames[f]),
                "expected a value; found no such key (it is required)");
      return *field[f];
    };
    auto name_of = [&](Field f) -> std::string_view {
      const toml::node& n = required(f);
      if (!n.is_string())
        w_.fail(line_of(n), KeyRef(index, kNames[f]), "expected a name; found " + describe(n));
      return n.as_string()->get();
    };
    std::string_view coll = name_of(kCollective);
    auto c = parse_collective(coll);
    if (!c)
      w_.fail(line_of(required(kCollective)), KeyRef(index, "collective"),
              "expected one of " + all_collective_names() + "; found " + in_quotes(coll));
    r.collective = *c;
    r.min_bytes = byte_size(required(kMinBytes), KeyRef(index, "min_bytes"));
    r.max_bytes = byte_size(required(kMaxBytes), KeyRef(index, "max_bytes"));
    lines.max_bytes = line_of(required(kMaxBytes));
    std::string_view algo = name_of(kAlgorithm);
    lines.algorithm = line_of(required(kAlgorithm));
    auto a = parse_algorithm(algo);
    if (!a)
      w_.fail(lines.algorithm, KeyRef(index, "algorithm"),
              "expected one of " + all_algorithm_names() + "; found " + in_quotes(algo));
    r.algorithm = *a;
    std::string_view proto = name_of(kProtocol);
    lines.protocol = line_of(required(kProtocol));
    auto pr = parse_protocol(proto);
    if (!pr)
      w_.fail(lines.protocol, KeyRef(index, "protocol"),
              "expected one of ll, ll128, simple; found " + in_quotes(proto));
    r.protocol = *pr;
    lines.channels = lines.header;
    if (const toml::node* n = field[kChannels]) {
      lines.channels = line_of(*n);
      int64_t v = integer(*n, KeyRef(index, "channels"));
      if (v < 0 || v > kMaxChannels)
        w_.fail(lines.channels, KeyRef(index, "channels"),
                "expected an integer 0..64 (0 = NCCL decides); found " + std::to_string(v));
      r.channels = static_cast<int>(v);
    }
  }

  // Which communicators and calls the rule applies to (nodes, ranks, ranks per node, pipe_ops, reg_buff), and
  // the chunk size it sets.
  void read_scope(const RuleFields& field, size_t index, RuleLines& lines, Rule& r) {
    if (const toml::node* n = field[kNodes])
      r.nodes = count_range(*n, KeyRef(index, "nodes")), lines.nodes = line_of(*n);
    if (const toml::node* n = field[kRanks])
      r.ranks = count_range(*n, KeyRef(index, "ranks")), lines.ranks = line_of(*n);
    if (const toml::node* n = field[kRanksPerNode])
      r.ranks_per_node = count_range(*n, KeyRef(index, "ranks_per_node")), lines.ranks_per_node = line_of(*n);
    if (const toml::node* n = field[kPipeOps])
      r.pipe_ops = count_range(*n, KeyRef(index, "pipe_ops")), lines.pipe_ops = line_of(*n);
    if (const toml::node* n = field[kRegBuff]) {
      if (!n->is_boolean())
        w_.fail(line_of(*n), KeyRef(index, "reg_buff"),
                "expected true or false (whether NCCL registered both buffers); found " + describe(*n));
      r.reg_buff = n->as_boolean()->get();
    }
    lines.chunk_bytes = lines.header;
    if (const toml::node* n = field[kChunkBytes]) {
      lines.chunk_bytes = line_of(*n);
      r.chunk_bytes = byte_size(*n, KeyRef(index, "chunk_bytes"));
    }
  }
};

// toml++ 3.3 (Debian bookworm) reaches __builtin_unreachable() on some non-ASCII characters where TOML allows
// whitespace (marzer/tomlplusplus#190, #295; fixed upstream after 3.3): undefined behaviour inside every job
// that loads the plugin. A profile holds names, numbers and NCCL settings, all ASCII, so anything else is
// refused before toml++ sees it (a leading UTF-8 byte order mark aside).
void require_ascii(std::string_view text, std::string_view file_name) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  const size_t start = text.substr(0, kBom.size()) == kBom ? kBom.size() : 0;
  int line = 1;
  size_t line_start = 0;
  for (size_t i = start; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n') {
      ++line;
      line_start = i + 1;
    } else if (byte >= 0x80) {
      char found[64];
      std::snprintf(found, sizeof found, "found the byte 0x%02X at column %zu", byte, i - line_start + 1);
      throw InputError(
          std::string(file_name), line,
          "expected ASCII text (a profile holds names, numbers and NCCL settings); " + std::string(found));
    }
  }
}

}  // namespace

Profile parse_profile(std::string_view text, std::string_view file_name) {
  require_ascii(text, file_name);
  toml::table root;
  try {
    root = toml::parse(text, file_name);
  } catch (const toml::parse_error& e) {
    throw InputError(std::string(file_name), static_cast<int>(e.source().begin.line),
                     "TOML syntax: " + std::string(e.description()));
  }
  return Reader(file_name).read(root);
}

Profile read_profile(const std::filesystem::path& path) {
  return parse_profile(read_file(path, kProfileInput), path.string());
}

}  // namespace autotune::profiles
