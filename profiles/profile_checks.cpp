#include "profiles/profile_checks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/byte_size.hpp"
#include "nccl/env_policy.hpp"
#include "nccl/tuner_constants.hpp"
#include "nccl/version.hpp"
#include "profiles/profile_toml.hpp"

namespace autotune::profiles::checks {

using nccl::allowed_algorithms_text;
using nccl::check_env_entry;
using nccl::constant_index_name;
using nccl::constant_max;
using nccl::constant_tables;
using nccl::ConstantTable;
using nccl::ConstantUnit;
using nccl::find_constant_table;
using nccl::kAllAlgorithms;
using nccl::kAllCollectives;
using nccl::kMaxChannels;
using nccl::kNumCollectives;
using nccl::parse_constant_index;

namespace {

bool is_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM), each field within its calendar range.
  auto digits = [&](size_t pos, size_t n) {
    if (pos + n > s.size()) return false;
    for (size_t i = pos; i < pos + n; ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  auto two = [&](size_t pos) { return (s[pos] - '0') * 10 + (s[pos + 1] - '0'); };
  if (!(digits(0, 4) && s.size() > 19 && s[4] == '-' && digits(5, 2) && s[7] == '-' && digits(8, 2) &&
        (s[10] == 'T' || s[10] == 't') && digits(11, 2) && s[13] == ':' && digits(14, 2) && s[16] == ':' &&
        digits(17, 2)))
    return false;
  const int year = two(0) * 100 + two(2), month = two(5), day = two(8);
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] + (month == 2 && leap) || two(11) > 23 ||
      two(14) > 59 || two(17) > 60)
    return false;
  size_t pos = 19;
  if (s[pos] == '.') {
    size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return false;
  }
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) return pos + 1 == s.size();
  return pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && digits(pos + 1, 2) && s[pos + 3] == ':' &&
         digits(pos + 4, 2) && two(pos + 1) <= 23 && two(pos + 4) <= 59;
}

bool is_version(std::string_view s) {
  return nccl::Version::parse(s).has_value();
}

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace autotune::profiles::checks

namespace autotune::profiles {

using namespace checks;

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

void validate_profile(const Profile& p, std::string_view file_name) {
  Where w{file_name};
  if (p.schema != kSchemaVersion)
    w.fail(0, "schema", "expected " + std::to_string(kSchemaVersion) + "; found " + std::to_string(p.schema));
  check_cluster(w, p.cluster, 0);
  check_provenance(w, p.provenance, 0, 0);
  for (const auto& [k, v] : p.env) check_env(w, k, v, 0);
  if (const auto problem = nccl::env_set_problem(p.env)) w.fail(0, "env", problem->message);
  for (const auto& c : p.constants) check_constant(w, c);
  const nccl::BufferSizes buffers = nccl::buffer_sizes(p.env);
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const int l = p.rules[i].source_line;
    const RuleLines lines{l, l, l, l, l, l, l, l, l, l};
    check_rule(w, p.rules[i], i, lines, buffers);
  }
  check_overlaps(w, p.rules);
}

}  // namespace autotune::profiles
