#include "profiles/profile_toml.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "common/atomic_file.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "common/name_table.hpp"
#include "nccl/chunk_size.hpp"
#include "nccl/env_policy.hpp"
#include "nccl/tuner_constants.hpp"
#include "nccl/version.hpp"

namespace autotune::profiles {

using nccl::allowed_algorithms_text;
using nccl::check_env_entry;
using nccl::check_env_set;
using nccl::constant_index_name;
using nccl::constant_index_names;
using nccl::constant_max;
using nccl::constant_table_order;
using nccl::constant_tables;
using nccl::ConstantTable;
using nccl::ConstantUnit;
using nccl::find_constant_table;
using nccl::kAllAlgorithms;
using nccl::kAllCollectives;
using nccl::kNumCollectives;
using nccl::parse_algorithm;
using nccl::parse_collective;
using nccl::parse_constant_index;
using nccl::parse_protocol;
namespace {

using nccl::kMaxChannels;

std::string in_quotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string all_collective_names() {
  std::string out;
  for (auto c : kAllCollectives) out += (out.empty() ? "" : ", ") + std::string(name(c));
  return out;
}
std::string all_algorithm_names() {
  std::string out;
  for (auto a : kAllAlgorithms) out += (out.empty() ? "" : ", ") + std::string(name(a));
  return out;
}

std::string rule_key(size_t index) {
  return "rule[" + std::to_string(index + 1) + "]";
}

std::string format_double(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keeps it a TOML float
  return s;
}

bool is_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto digits = [&](size_t pos, size_t n) {
    if (pos + n > s.size()) return false;
    for (size_t i = pos; i < pos + n; ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  if (!(digits(0, 4) && s.size() > 19 && s[4] == '-' && digits(5, 2) && s[7] == '-' && digits(8, 2) &&
        (s[10] == 'T' || s[10] == 't') && digits(11, 2) && s[13] == ':' && digits(14, 2) && s[16] == ':' &&
        digits(17, 2)))
    return false;
  size_t pos = 19;
  if (s[pos] == '.') {
    size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return false;
  }
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) return pos + 1 == s.size();
  return pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && digits(pos + 1, 2) && s[pos + 3] == ':' &&
         digits(pos + 4, 2);
}

bool is_version(std::string_view s) {
  return nccl::Version::parse(s).has_value();
}

// --- Checks shared by the reader and validate_profile
// -------------------------------------------------------

// The key a message names. A rule's keys ("rule[12].min_bytes") are assembled only when a message needs one:
// building them eagerly cost a few heap allocations per rule, most of the reader's own time at 10,000 rules.
class KeyRef {
 public:
  KeyRef(const std::string& whole) : whole_(&whole) {}  // NOLINT: implicit on purpose
  KeyRef(size_t rule_index, std::string_view field) : rule_(rule_index), field_(field) {}
  std::string str() const {
    if (whole_) return *whole_;
    std::string key = rule_key(rule_);
    if (!field_.empty()) key.append(".").append(field_);
    return key;
  }

 private:
  const std::string* whole_ = nullptr;  // only valid during the call that received this KeyRef
  size_t rule_ = 0;
  std::string_view field_;
};

struct Where {
  std::string_view file;
  [[noreturn]] void fail(int line, const std::string& key, const std::string& message) const {
    throw InputError(std::string(file), line, key + ": " + message);
  }
  [[noreturn]] void fail(int line, const KeyRef& key, const std::string& message) const {
    fail(line, key.str(), message);
  }
};

void check_cluster(const Where& w, const ClusterInfo& c, int line) {
  if (c.name.empty()) w.fail(line, "cluster.name", "expected a non-empty cluster name; found \"\"");
}

void check_provenance(const Where& w, const Provenance& p, int created_line, int version_line) {
  if (!is_rfc3339(p.created))
    w.fail(created_line, "provenance.created",
           "expected an RFC 3339 time such as 2025-06-01T12:00:00Z; found " + in_quotes(p.created));
  if (!is_version(p.nccl_version))
    w.fail(version_line, "provenance.nccl_version",
           "expected a version such as 2.28.9; found " + in_quotes(p.nccl_version));
}

void check_env(const Where& w, const std::string& key, const std::string& value, int line) {
  try {
    check_env_entry(key, value);
  } catch (const InputError& e) {
    w.fail(line, "env", e.message());
  }
}

void check_constant(const Where& w, const ConstantOverride& c) {
  const ConstantTable* t = find_constant_table(c.table);
  std::string key = "constants." + c.table;
  if (!t) {
    std::string names;
    for (const auto& tt : constant_tables()) names += (names.empty() ? "" : ", ") + std::string(tt.name);
    w.fail(c.source_line, "constants", "expected one of " + names + "; found " + in_quotes(c.table));
  }
  if (c.index.size() != t->indices.size())
    w.fail(c.source_line, key,
           "expected " + std::to_string(t->indices.size()) + " indices; found " +
               std::to_string(c.index.size()));
  for (size_t i = 0; i < c.index.size(); ++i) {
    std::string probe;
    bool ok = c.index[i] >= 0;
    if (ok) {
      probe = constant_index_name(t->indices[i], c.index[i]);
      ok = parse_constant_index(t->indices[i], probe) == c.index[i];
    }
    if (!ok) w.fail(c.source_line, key, "index " + std::to_string(c.index[i]) + " is out of range");
    key += "." + probe;
  }
  double max = constant_max(t->unit);
  if (!std::isfinite(c.value) || c.value < 0 || c.value > max) {
    std::string unit = t->unit == ConstantUnit::microseconds ? " us" : " GB/s";
    w.fail(c.source_line, key,
           "expected a finite number 0.." + std::to_string(static_cast<long long>(max)) + unit + "; found " +
               format_double(c.value));
  }
}

void check_count_range(const Where& w, const std::optional<CountRange>& r, int line, const KeyRef& key) {
  if (r && (r->min < 1 || r->min > r->max))
    w.fail(line, key,
           "expected a count >= 1 or a range such as \"2-8\" with min <= max; found " +
               in_quotes(format_count_range(r)));
}

// A gain is a time ratio - 1: above -1, and below 1000 (a thousandfold speed-up is a broken measurement).
void check_gain(const Where& w, const GainEvidence& g, size_t index, int line) {
  auto finite_gain = [&](double v, const char* what) {
    if (!std::isfinite(v) || v <= -1.0 || v >= 1000.0)
      w.fail(line, KeyRef(index, what),
             "expected a gain above -1 and below 1000 (time ratio - 1: 0.05 = 5% faster); found " +
                 format_double(v));
  };
  finite_gain(g.gain, "gain");
  finite_gain(g.low, "gain_low");
  finite_gain(g.high, "gain_high");
  if (!(g.low <= g.gain && g.gain <= g.high))
    w.fail(line, KeyRef(index, "gain"),
           "expected gain_low <= gain <= gain_high; found " + format_double(g.low) + ", " +
               format_double(g.gain) + ", " + format_double(g.high));
  if (!(g.confidence > 0.0 && g.confidence < 1.0))
    w.fail(line, KeyRef(index, "confidence"),
           "expected a share between 0 and 1 (0.9 = a 90% interval); found " + format_double(g.confidence));
  if (g.sizes < 1)
    w.fail(line, KeyRef(index, "sizes"), "expected an integer >= 1; found " + std::to_string(g.sizes));
  if (g.default_samples < 1)
    w.fail(line, KeyRef(index, "default_samples"),
           "expected an integer >= 1; found " + std::to_string(g.default_samples));
}

struct RuleLines {
  int header = 0, algorithm = 0, protocol = 0, max_bytes = 0, channels = 0, nodes = 0, ranks = 0,
      ranks_per_node = 0, evidence = 0, pipe_ops = 0, chunk_bytes = 0, runner_up = 0;
};

void check_runner_up(const Where& w, const Rule& r, size_t index, int line) {
  if (!r.runner_up) return;
  const Rule::RunnerUp& u = *r.runner_up;
  if (!is_allowed(r.collective, u.algorithm, u.protocol) || u.channels < 0 || u.channels > kMaxChannels)
    w.fail(line, KeyRef(index, "runner_up"),
           "expected a candidate NCCL can run for " + std::string(name(r.collective)) +
               " (channels 0..64); found " + in_quotes(runner_up_text(u)));
  if (!std::isfinite(u.busbw_gbps) || u.busbw_gbps < 0 || u.busbw_gbps > 1e5)
    w.fail(line, KeyRef(index, "runner_up_busbw_gbps"),
           "expected a finite number 0..100000 GB/s; found " + format_double(u.busbw_gbps));
}

void check_chunk(const Where& w, const Rule& r, size_t index, int line, const nccl::BufferSizes& buffers) {
  if (r.chunk_bytes == 0) return;
  if (r.has_call_conditions())
    w.fail(line, KeyRef(index, "chunk_bytes"),
           "expected no pipe_ops or reg_buff beside a chunk size (NCCL's getChunkSize is not told them, so "
           "the plugin could not tell which rule to follow); found both");
  if (auto problem = nccl::chunk_problem(r.chunk_bytes, r.collective, r.algorithm, r.protocol, buffers))
    w.fail(line, KeyRef(index, "chunk_bytes"), *problem);
}

void check_rule(const Where& w, const Rule& r, size_t index, const RuleLines& lines,
                const nccl::BufferSizes& buffers) {
  if (!is_allowed(r.collective, r.algorithm))
    w.fail(lines.algorithm, KeyRef(index, "algorithm"),
           "expected one of " + allowed_algorithms_text(r.collective) + " (what NCCL allows for " +
               std::string(name(r.collective)) + "); found " + in_quotes(name(r.algorithm)));
  if (!is_allowed(r.collective, r.algorithm, r.protocol))
    w.fail(lines.protocol, KeyRef(index, "protocol"),
           "expected simple (" + std::string(name(r.algorithm)) + " takes Simple only); found " +
               in_quotes(name(r.protocol)));
  if (r.min_bytes > r.max_bytes)
    w.fail(lines.max_bytes, KeyRef(index, "max_bytes"),
           "expected at least min_bytes (" + std::to_string(r.min_bytes) + "); found " +
               std::to_string(r.max_bytes));
  if (r.channels < 0 || r.channels > kMaxChannels)
    w.fail(lines.channels, KeyRef(index, "channels"),
           "expected an integer 0..64 (0 = NCCL decides); found " + std::to_string(r.channels));
  check_count_range(w, r.nodes, lines.nodes, KeyRef(index, "nodes"));
  check_count_range(w, r.ranks, lines.ranks, KeyRef(index, "ranks"));
  check_count_range(w, r.ranks_per_node, lines.ranks_per_node, KeyRef(index, "ranks_per_node"));
  check_count_range(w, r.pipe_ops, lines.pipe_ops, KeyRef(index, "pipe_ops"));
  check_chunk(w, r, index, lines.chunk_bytes, buffers);
  auto check_bw = [&](const std::optional<double>& v, const char* what) {
    if (v && (!std::isfinite(*v) || *v < 0 || *v > 1e5))
      w.fail(lines.evidence, KeyRef(index, what),
             "expected a finite number 0..100000 GB/s; found " + format_double(*v));
  };
  check_bw(r.busbw_gbps, "busbw_gbps");
  check_bw(r.default_busbw_gbps, "default_busbw_gbps");
  if (r.samples && *r.samples < 1)
    w.fail(lines.evidence, KeyRef(index, "samples"),
           "expected an integer >= 1; found " + std::to_string(*r.samples));
  if (r.gain) check_gain(w, *r.gain, index, lines.evidence);
  check_runner_up(w, r, index, lines.runner_up ? lines.runner_up : lines.header);
}

}  // namespace

std::string runner_up_text(const Rule::RunnerUp& u) {
  return std::string(name(u.algorithm)) + "/" + std::string(name(u.protocol)) + "/" +
         std::to_string(u.channels);
}

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

std::string describe_rule(const Rule& r) {
  std::string out = format_byte_size(r.min_bytes) + ".." + format_byte_size(r.max_bytes) + ", nodes " +
                    format_count_range(r.nodes) + ", ranks " + format_count_range(r.ranks);
  if (r.ranks_per_node) out += ", ranks_per_node " + format_count_range(r.ranks_per_node);
  if (r.pipe_ops) out += ", pipe_ops " + format_count_range(r.pipe_ops);
  if (r.reg_buff) out += std::string(", reg_buff ") + (*r.reg_buff ? "true" : "false");
  return out;
}

bool rules_overlap(const Rule& a, const Rule& b) {
  const CountRange any{};
  return a.collective == b.collective && a.min_bytes <= b.max_bytes && b.min_bytes <= a.max_bytes &&
         a.nodes.value_or(any).overlaps(b.nodes.value_or(any)) &&
         a.ranks.value_or(any).overlaps(b.ranks.value_or(any)) &&
         a.ranks_per_node.value_or(any).overlaps(b.ranks_per_node.value_or(any)) &&
         a.pipe_ops.value_or(any).overlaps(b.pipe_ops.value_or(any)) &&
         (!a.reg_buff || !b.reg_buff || *a.reg_buff == *b.reg_buff);
}

namespace {

// No two rules overlap (rules_overlap). A sweep over rules sorted by min_bytes keeps this near-linear for
// real profiles.
void check_overlaps(const Where& w, const std::vector<Rule>& rules) {
  // Sorted by (collective, min_bytes, position) packed into one 128-bit key: 3 bits, 64 bits, 61 bits (a
  // vector never holds 2^61 rules). Comparing plain integers in one contiguous array keeps this sort, the
  // largest part of the reader's own time, a few times cheaper than comparing tuples through indices.
  // check_rule has already rejected collectives outside kAllCollectives.
  static_assert(kNumCollectives <= 8);
  __extension__ using Key = unsigned __int128;
  std::vector<Key> order(rules.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = (Key(static_cast<unsigned>(rules[i].collective)) << 125) | (Key(rules[i].min_bytes) << 61) | i;
  // Written profiles come sorted this way already (format_profile's order at one scale): check first.
  if (!std::is_sorted(order.begin(), order.end())) std::sort(order.begin(), order.end());
  auto index_of = [](Key k) { return static_cast<size_t>(k & ((Key(1) << 61) - 1)); };
  auto collective_of = [](Key k) { return static_cast<unsigned>(k >> 125); };
  std::vector<size_t> active;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const size_t current = index_of(order[pos]);
    const Rule& r = rules[current];
    if (pos > 0 && collective_of(order[pos - 1]) != collective_of(order[pos])) active.clear();
    std::erase_if(active, [&](size_t i) { return rules[i].max_bytes < r.min_bytes; });
    for (size_t i : active) {
      if (!rules_overlap(rules[i], r)) continue;
      size_t later = std::max(i, current), earlier = std::min(i, current);
      const Rule& a = rules[later];
      const Rule& b = rules[earlier];
      w.fail(a.source_line, rule_key(later),
             "expected byte ranges that do not overlap for one collective and scale; found " +
                 describe_rule(a) + " overlapping " + rule_key(earlier) +
                 (b.source_line ? " at line " + std::to_string(b.source_line) : "") + " (" +
                 describe_rule(b) + ")");
    }
    active.push_back(current);
  }
}

// --- The TOML reader
// ----------------------------------------------------------------------------------------

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

  Profile read(const toml::table& root) {
    Profile p;
    check_keys(root, "", {"schema", "cluster", "provenance", "env", "policy", "online", "constants", "rule"},
               1);
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

    if (const toml::node* env = root.get("env")) {
      const toml::table* t = env->as_table();
      if (!t) w_.fail(line_of(*env), "env", "expected a table [env]; found " + describe(*env));
      for (auto&& [k, v] : *t) {
        std::string key(k.str());
        if (!v.is_string())
          w_.fail(line_of(v), "env." + key,
                  "expected a string (NCCL reads text: \"1\"); found " + describe(v));
        std::string value = v.as_string()->get();
        check_env(w_, key, value, line_of(v));
        p.env[key] = value;
      }
      try {
        check_env_set(p.env);
      } catch (const InputError& e) {
        w_.fail(line_of(*t->get("NCCL_MIN_NCHANNELS")), "env", e.message());
      }
    }

    buffers_ = nccl::buffer_sizes(p.env);

    if (const toml::node* policy = root.get("policy")) {
      const toml::table* t = policy->as_table();
      if (!t) w_.fail(line_of(*policy), "policy", "expected a table [policy]; found " + describe(*policy));
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

    if (const toml::node* online = root.get("online")) read_online(p, *online);

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
      p.rules.reserve(a->size());
      for (size_t i = 0; i < a->size(); ++i) p.rules.push_back(read_rule(*(*a)[i].as_table(), i));
    }
    check_overlaps(w_, p.rules);
    return p;
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
    w_.fail(line, prefix + std::string(k.str()),
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
                                                                       "runner_up_busbw_gbps"};
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
    Rule r;
    r.source_line = lines.header;
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
    r.busbw_gbps = number(field, kBusbw, index, lines);
    r.default_busbw_gbps = number(field, kDefaultBusbw, index, lines);
    r.samples = positive(field, kSamples, index, lines);
    r.gain = gain_evidence(field, index, lines);
    if (!lines.evidence) lines.evidence = lines.header;
    r.runner_up = read_runner_up(field[kRunnerUp], field[kRunnerUpBusbw], index);
    if (field[kRunnerUp]) lines.runner_up = line_of(*field[kRunnerUp]);
    check_rule(w_, r, index, lines, buffers_);
    return r;
  }
};

// --- The writer
// ---------------------------------------------------------------------------------------------

// The UTF-8 sequence at s[i]: its code point and length, or nullopt when it is not well formed.
std::optional<std::pair<char32_t, size_t>> utf8_at(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  const size_t length = lead >= 0xF0 && lead <= 0xF4  ? 4
                        : lead >= 0xE0                ? 3
                        : lead >= 0xC2 && lead < 0xE0 ? 2
                                                      : 0;
  if (length == 0 || i + length > s.size()) return std::nullopt;
  char32_t code = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return std::nullopt;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
  return std::pair{code, length};
}

// Profiles are ASCII (parse_profile refuses anything else), so text from outside, such as a command line
// with a non-ASCII path or a GPU name, is written with TOML escapes; bytes that are not UTF-8 become U+FFFD.
std::string toml_string(std::string_view s) {
  auto plain = [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  };
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    size_t run = i;
    while (run < s.size() && plain(s[run])) ++run;
    out.append(s.data() + i, run - i);
    if (run == s.size()) break;
    char c = s[run];
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default: {
        char32_t code = static_cast<unsigned char>(c);
        size_t length = 1;
        if (code >= 0x80) {
          const auto decoded = utf8_at(s, run);
          code = decoded ? decoded->first : 0xFFFD;
          length = decoded ? decoded->second : 1;
        }
        char buf[16];
        if (code > 0xFFFF)
          std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(code));
        else
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(code));
        out += buf;
        i = run + length;
        continue;
      }
    }
    i = run + 1;
  }
  out += '"';
  return out;
}

// ["a", "b"]: items after `separator` (" ", or a line break and indent for long lists, one item per line).
std::string toml_string_array(const std::vector<std::string>& items, std::string_view separator) {
  const bool multiline = separator.find('\n') != std::string_view::npos;
  std::string out = "[";
  for (size_t k = 0; k < items.size(); ++k)
    out += std::string(k && !multiline ? "," : "") + (k || multiline ? std::string(separator) : "") +
           toml_string(items[k]) + (multiline ? "," : "");
  return out + (multiline ? "\n]" : "]");
}

std::string toml_size(uint64_t bytes) {
  std::string exact = format_byte_size(bytes);
  // Values that have a short exact unit spelling are written that way; odd values (often 2^k - 1, the
  // inclusive end of a range) as integers with a rounded reading beside them.
  if (bytes < 1024 || exact.back() > '9' || bytes > static_cast<uint64_t>(INT64_MAX))
    return toml_string(exact);
  return std::to_string(bytes) + "  # ~" + human_byte_size(bytes);
}

std::string toml_count_range(const CountRange& r) {
  if (r.min == r.max) return std::to_string(r.min);
  return toml_string(format_count_range(r));
}

auto rule_order_key(const Rule& r) {
  const CountRange none{0, 0};  // absent ranges ("any") sort first
  CountRange n = r.nodes.value_or(none), k = r.ranks.value_or(none), q = r.pipe_ops.value_or(none),
             l = r.ranks_per_node.value_or(none);
  const int reg = r.reg_buff ? (*r.reg_buff ? 2 : 1) : 0;
  return std::make_tuple(static_cast<int>(r.collective), n.min, n.max, k.min, k.max, l.min, l.max,
                         r.min_bytes, r.max_bytes, q.min, q.max, reg);
}

}  // namespace

std::string format_count_range(const std::optional<CountRange>& range) {
  if (!range) return "any";
  if (range->min == range->max) return std::to_string(range->min);
  if (range->max == std::numeric_limits<int>::max()) return std::to_string(range->min) + "+";
  return std::to_string(range->min) + "-" + std::to_string(range->max);
}

namespace {

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
  return parse_profile(read_file(path), path.string());
}

void validate_profile(const Profile& p, std::string_view file_name) {
  Where w{file_name};
  if (p.schema != kSchemaVersion)
    w.fail(0, "schema", "expected " + std::to_string(kSchemaVersion) + "; found " + std::to_string(p.schema));
  check_cluster(w, p.cluster, 0);
  check_provenance(w, p.provenance, 0, 0);
  for (const auto& [k, v] : p.env) check_env(w, k, v, 0);
  try {
    check_env_set(p.env);
  } catch (const InputError& e) {
    w.fail(0, "env", e.message());
  }
  for (const auto& c : p.constants) check_constant(w, c);
  const nccl::BufferSizes buffers = nccl::buffer_sizes(p.env);
  for (size_t i = 0; i < p.rules.size(); ++i) {
    RuleLines lines;
    int l = p.rules[i].source_line;
    lines = {l, l, l, l, l, l, l, l, l, l};
    check_rule(w, p.rules[i], i, lines, buffers);
  }
  check_overlaps(w, p.rules);
}

std::string format_profile(const Profile& p) {
  std::string out;
  out.reserve(256 + p.rules.size() * 160);
  out += "# nccl-autotune profile; the format is described in docs/profiles.md.\n";
  out += "schema = " + std::to_string(p.schema) + "\n\n";
  out += "[cluster]\n";
  out += "name = " + toml_string(p.cluster.name) + "\n";
  out += "fingerprint = " + toml_string(p.cluster.fingerprint) + "\n";
  out += "gpu_model = " + toml_string(p.cluster.gpu_model) + "\n";
  out += "gpus_per_node = " + std::to_string(p.cluster.gpus_per_node) + "\n";
  out += "nodes = " + std::to_string(p.cluster.nodes) + "\n";
  out += "nics_per_node = " + std::to_string(p.cluster.nics_per_node) + "\n";
  if (!p.cluster.fingerprint_facts.empty())
    out += "fingerprint_facts = " + toml_string_array(p.cluster.fingerprint_facts, "\n  ") + "\n";
  out += "\n";
  out += "[provenance]\n";
  out += "created = " + toml_string(p.provenance.created) + "\n";
  out += "tool_version = " + toml_string(p.provenance.tool_version) + "\n";
  out += "nccl_version = " + toml_string(p.provenance.nccl_version) + "\n";
  out += "source = " + toml_string(name(p.provenance.source)) + "\n";
  out += "command = " + toml_string(p.provenance.command) + "\n";
  if (!p.provenance.health.empty()) out += "health = " + toml_string(p.provenance.health) + "\n";
  if (!p.provenance.excluded_nodes.empty())
    out += "excluded_nodes = " + toml_string_array(p.provenance.excluded_nodes, " ") + "\n";
  if (!p.provenance.health_findings.empty())
    out += "health_findings = " + toml_string_array(p.provenance.health_findings, "\n  ") + "\n";
  out += "\n";
  out += "[env]\n";
  for (const auto& [k, v] : p.env) out += k + " = " + toml_string(v) + "\n";
  out += "\n[policy]\n";
  out += std::string("uncalibrated = ") +
         (p.uncalibrated == UncalibratedPolicy::nearest_scale ? "\"nearest\"" : "\"nccl\"") + "\n";
  if (p.apply_under_other_nccl) out += "other_nccl = \"apply\"\n";
  if (p.online) {
    out += "\n[online]\n";
    out += std::string("telemetry = ") + (p.online->telemetry ? "true" : "false") + "\n";
    out += "explore = " + format_double(p.online->explore) + "\n";
  }
  if (!p.constants.empty()) {
    std::vector<const ConstantOverride*> cs;
    for (const auto& c : p.constants) cs.push_back(&c);
    std::sort(cs.begin(), cs.end(), [](const ConstantOverride* a, const ConstantOverride* b) {
      return std::make_tuple(constant_table_order(a->table), a->index) <
             std::make_tuple(constant_table_order(b->table), b->index);
    });
    out += "\n[constants]\n";
    for (const ConstantOverride* c : cs) {
      const ConstantTable* t = find_constant_table(c->table);
      out += c->table;
      for (size_t i = 0; i < c->index.size(); ++i)
        out += "." + (t && i < t->indices.size() ? constant_index_name(t->indices[i], c->index[i])
                                                 : std::to_string(c->index[i]));
      out += " = " + format_double(c->value) + "\n";
    }
  }
  std::vector<const Rule*> rules;
  rules.reserve(p.rules.size());
  for (const auto& r : p.rules) rules.push_back(&r);
  std::stable_sort(rules.begin(), rules.end(),
                   [](const Rule* a, const Rule* b) { return rule_order_key(*a) < rule_order_key(*b); });
  for (const Rule* r : rules) {
    out += "\n[[rule]]\n";
    out += "collective = " + toml_string(name(r->collective)) + "\n";
    out += "min_bytes = " + toml_size(r->min_bytes) + "\n";
    out += "max_bytes = " + toml_size(r->max_bytes) + "\n";
    out += "algorithm = " + toml_string(name(r->algorithm)) + "\n";
    out += "protocol = " + toml_string(name(r->protocol)) + "\n";
    out += "channels = " + std::to_string(r->channels) + "\n";
    if (r->nodes) out += "nodes = " + toml_count_range(*r->nodes) + "\n";
    if (r->ranks) out += "ranks = " + toml_count_range(*r->ranks) + "\n";
    if (r->ranks_per_node) out += "ranks_per_node = " + toml_count_range(*r->ranks_per_node) + "\n";
    if (r->pipe_ops) out += "pipe_ops = " + toml_count_range(*r->pipe_ops) + "\n";
    if (r->reg_buff) out += std::string("reg_buff = ") + (*r->reg_buff ? "true" : "false") + "\n";
    if (r->chunk_bytes) out += "chunk_bytes = " + toml_size(r->chunk_bytes) + "\n";
    if (r->busbw_gbps) out += "busbw_gbps = " + format_double(*r->busbw_gbps) + "\n";
    if (r->default_busbw_gbps) out += "default_busbw_gbps = " + format_double(*r->default_busbw_gbps) + "\n";
    if (r->samples) out += "samples = " + std::to_string(*r->samples) + "\n";
    if (const auto& g = r->gain) {
      out += "gain = " + format_double(g->gain) + "\n";
      out += "gain_low = " + format_double(g->low) + "\n";
      out += "gain_high = " + format_double(g->high) + "\n";
      out += "confidence = " + format_double(g->confidence) + "\n";
      out += "sizes = " + std::to_string(g->sizes) + "\n";
      out += "default_samples = " + std::to_string(g->default_samples) + "\n";
    }
    if (r->runner_up) {
      out += "runner_up = " + toml_string(runner_up_text(*r->runner_up)) + "\n";
      out += "runner_up_busbw_gbps = " + format_double(r->runner_up->busbw_gbps) + "\n";
    }
  }
  return out;
}

void write_profile(const std::filesystem::path& path, const Profile& profile) {
  validate_profile(profile, path.string());
  write_file_atomically(path, format_profile(profile));
}

}  // namespace autotune::profiles
