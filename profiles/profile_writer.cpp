// The profile's canonical text (format_profile) and its atomic write; the reader is profile_reader.cpp.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>

#include "common/atomic_file.hpp"
#include "common/byte_size.hpp"
#include "nccl/tuner_constants.hpp"
#include "profiles/profile_checks.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/toml_escape.hpp"

namespace autotune::profiles {

using checks::format_double;
using nccl::constant_index_name;
using nccl::constant_table_order;
using nccl::ConstantTable;
using nccl::find_constant_table;

namespace {

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

std::string runner_up_text(const Rule::RunnerUp& u) {
  return std::string(name(u.algorithm)) + "/" + std::string(name(u.protocol)) + "/" +
         std::to_string(u.channels);
}

namespace {

// [cluster] and [provenance].
void format_origin(const Profile& p, std::string& out) {
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
}

// [layout] and its [[layout.group]] tables, in the layout's order.
void format_layout(const Profile& p, std::string& out) {
  if (!p.layout) return;
  out += "\n[layout]\nparallelism = " + toml_string(p.layout->parallelism) + "\n";
  if (!p.layout->p2p_env.empty()) out += "p2p_env = " + toml_string_array(p.layout->p2p_env, " ") + "\n";
  for (const auto& g : p.layout->groups) {
    std::vector<std::string> ops;
    for (auto op : g.operations) ops.emplace_back(nccl::name(op));
    out += "\n[[layout.group]]\nkind = " + toml_string(g.kind) + "\nnodes = " + std::to_string(g.nodes) +
           "\nranks = " + std::to_string(g.ranks) + "\ngroups = " + std::to_string(g.groups) +
           "\noperations = " + toml_string_array(ops, " ") + "\n";
  }
}

// [env], [policy], [online], [layout] and [constants] (in table order, then index order).
void format_settings(const Profile& p, std::string& out) {
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
  format_layout(p, out);
  if (p.constants.empty()) return;
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

// One [[rule]]: its choice, range and scale, then its evidence.
void format_rule(const Rule& r, std::string& out) {
  out += "\n[[rule]]\n";
  out += "collective = " + toml_string(name(r.collective)) + "\n";
  out += "min_bytes = " + toml_size(r.min_bytes) + "\n";
  out += "max_bytes = " + toml_size(r.max_bytes) + "\n";
  out += "algorithm = " + toml_string(name(r.algorithm)) + "\n";
  out += "protocol = " + toml_string(name(r.protocol)) + "\n";
  out += "channels = " + std::to_string(r.channels) + "\n";
  if (r.nodes) out += "nodes = " + toml_count_range(*r.nodes) + "\n";
  if (r.ranks) out += "ranks = " + toml_count_range(*r.ranks) + "\n";
  if (r.ranks_per_node) out += "ranks_per_node = " + toml_count_range(*r.ranks_per_node) + "\n";
  if (r.pipe_ops) out += "pipe_ops = " + toml_count_range(*r.pipe_ops) + "\n";
  if (r.reg_buff) out += std::string("reg_buff = ") + (*r.reg_buff ? "true" : "false") + "\n";
  if (r.chunk_bytes) out += "chunk_bytes = " + toml_size(r.chunk_bytes) + "\n";
  if (r.busbw_gbps) out += "busbw_gbps = " + format_double(*r.busbw_gbps) + "\n";
  if (r.default_busbw_gbps) out += "default_busbw_gbps = " + format_double(*r.default_busbw_gbps) + "\n";
  if (r.samples) out += "samples = " + std::to_string(*r.samples) + "\n";
  if (const auto& g = r.gain) {
    out += "gain = " + format_double(g->gain) + "\n";
    out += "gain_low = " + format_double(g->low) + "\n";
    out += "gain_high = " + format_double(g->high) + "\n";
    out += "confidence = " + format_double(g->confidence) + "\n";
    out += "sizes = " + std::to_string(g->sizes) + "\n";
    out += "default_samples = " + std::to_string(g->default_samples) + "\n";
  }
  if (r.runner_up) {
    out += "runner_up = " + toml_string(runner_up_text(*r.runner_up)) + "\n";
    out += "runner_up_busbw_gbps = " + format_double(r.runner_up->busbw_gbps) + "\n";
  }
  if (r.basis) out += "basis = " + toml_string(name(*r.basis)) + "\n";
}

}  // namespace

std::string format_profile(const Profile& p) {
  std::string out;
  out.reserve(256 + p.rules.size() * 160);
  out += "# nccl-autotune profile; the format is described in docs/profiles.md.\n";
  out += "schema = " + std::to_string(p.schema) + "\n\n";
  format_origin(p, out);
  format_settings(p, out);
  std::vector<const Rule*> rules;
  rules.reserve(p.rules.size());
  for (const auto& r : p.rules) rules.push_back(&r);
  std::stable_sort(rules.begin(), rules.end(),
                   [](const Rule* a, const Rule* b) { return rule_order_key(*a) < rule_order_key(*b); });
  for (const Rule* r : rules) format_rule(*r, out);
  return out;
}

void write_profile(const std::filesystem::path& path, const Profile& profile) {
  validate_profile(profile, path.string());
  write_file_atomically(path, format_profile(profile));
}

}  // namespace autotune::profiles
