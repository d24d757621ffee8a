#include "profiles/nccl_csv.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <tuple>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "common/name_table.hpp"
#include "common/text.hpp"

namespace autotune::profiles {

using nccl::Algorithm;
using nccl::allowed_algorithms_text;
using nccl::Collective;
using nccl::kNumAlgorithms;
using nccl::kNumCollectives;
using nccl::kNumProtocols;
using nccl::Protocol;
namespace {

// Indexed by NCCL's ids, spelled as the example plugin's parser expects them.
constexpr std::array<std::string_view, kNumCollectives> kCollectives = {"broadcast", "reduce", "allgather",
                                                                        "reducescatter", "allreduce"};
constexpr std::array<std::string_view, kNumAlgorithms> kAlgorithms = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
constexpr std::array<std::string_view, kNumProtocols> kProtocols = {"ll", "ll128", "simple"};
constexpr int kMaxExpandedRows = 4096;
constexpr int kMaxChannels = 64;  // NCCL's MAXCHANNELS

constexpr const char* kFormat =
    "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]";

std::optional<long long> to_signed(std::string_view s) {
  bool neg = !s.empty() && s.front() == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return neg ? -v : v;
}

std::optional<uint64_t> to_unsigned(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::string in_quotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

// A line the example would not run as written: the column and the reason.
struct Skip {
  std::string message;
};

template <size_t N>
int name_field(const std::array<std::string_view, N>& names, std::string_view text, const char* column) {
  if (auto i = index_of(names, text)) return *i;
  throw Skip{std::string(column) + ": expected one of " + join_names(names) +
             " (in lower case, as NCCL's example " + "plugin compares them); found " + in_quotes(text)};
}

// nNodes, nRanks, numPipeOps: -1 or a count NCCL can pass (>= 1).
std::optional<CountRange> count_field(std::string_view text, const char* column) {
  auto v = to_signed(text);
  if (!v || !(*v == -1 || (*v >= 1 && *v <= std::numeric_limits<int>::max())))
    throw Skip{std::string(column) + ": expected -1 (any) or a count >= 1; found " + in_quotes(text)};
  if (*v == -1) return std::nullopt;
  return CountRange{static_cast<int>(*v), static_cast<int>(*v)};
}

Rule parse_line(const std::vector<std::string_view>& f) {
  if (f.size() < 8 || f.size() > 10)
    throw Skip{"row: expected 8 to 10 fields (" + std::string(kFormat) + "); found " +
               std::to_string(f.size())};
  Rule r;
  r.collective = static_cast<Collective>(name_field(kCollectives, f[0], "collective_type"));
  auto lo = to_unsigned(f[1]);
  if (!lo) throw Skip{"min_bytes: expected a byte count >= 0; found " + in_quotes(f[1])};
  auto hi = f[2] == "-1" ? std::optional<uint64_t>(std::numeric_limits<uint64_t>::max()) : to_unsigned(f[2]);
  if (!hi) throw Skip{"max_bytes: expected a byte count >= 0 or -1 (no limit); found " + in_quotes(f[2])};
  if (*lo > *hi)
    throw Skip{"max_bytes: expected at least min_bytes (" + std::to_string(*lo) + "); found " +
               std::to_string(*hi) + " (no size would match)"};
  r.min_bytes = *lo;
  r.max_bytes = *hi;
  r.algorithm = static_cast<Algorithm>(name_field(kAlgorithms, f[3], "algorithm"));
  r.protocol = static_cast<Protocol>(name_field(kProtocols, f[4], "protocol"));
  auto channels = to_signed(f[5]);
  if (!channels || *channels < -1 || *channels > kMaxChannels)
    throw Skip{"channels: expected -1 or 0 (NCCL decides) or 1..64; found " + in_quotes(f[5])};
  r.channels = *channels <= 0 ? 0 : static_cast<int>(*channels);
  r.nodes = count_field(f[6], "nNodes");
  r.ranks = count_field(f[7], "nRanks");
  if (f.size() >= 9) r.pipe_ops = count_field(f[8], "numPipeOps");
  if (f.size() == 10) {
    if (f[9] == "0" || f[9] == "1")
      r.reg_buff = f[9] == "1";
    else if (f[9] != "-1")
      throw Skip{"regBuff: expected -1 (any), 0 or 1; found " + in_quotes(f[9])};
  }
  return r;
}

// Into `f`, reused from line to line (a 10,000-line file must not cost 10,000 allocations).
void split_fields(std::string_view line, std::vector<std::string_view>& f) {
  f.clear();
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    f.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

}  // namespace

CsvRules read_nccl_csv(std::string_view text) {
  CsvRules out;
  // One rule a line at most: reserved once, so the rules are never copied while they grow.
  out.rules.reserve(std::min(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1, kMaxRules));
  std::vector<std::string_view> fields;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    if (out.rules.size() == kMaxRules) {
      out.skipped.push_back({line_no, "expected at most " + std::to_string(kMaxRules) +
                                          " rules; this line and those after it are not read"});
      break;
    }
    try {
      split_fields(line, fields);
      Rule r = parse_line(fields);
      r.source_line = line_no;
      out.rules.push_back(r);
    } catch (const Skip& s) {
      out.skipped.push_back({line_no, s.message});
    }
  }
  return out;
}

std::vector<Rule> parse_nccl_csv(std::string_view text, std::string_view file_name) {
  CsvRules read = read_nccl_csv(text);
  if (!read.skipped.empty())
    throw InputError(std::string(file_name), read.skipped.front().line, read.skipped.front().message);
  return std::move(read.rules);
}

std::vector<CsvSkipped> drop_combinations_nccl_never_runs(std::vector<Rule>& rules) {
  std::vector<CsvSkipped> dropped;
  std::erase_if(rules, [&](const Rule& r) {
    const std::string coll(kCollectives[static_cast<int>(r.collective)]),
        algo(kAlgorithms[static_cast<int>(r.algorithm)]), proto(kProtocols[static_cast<int>(r.protocol)]);
    if (!is_allowed(r.collective, r.algorithm))
      dropped.push_back({r.source_line, "algorithm: NCCL runs " + coll + " with " +
                                            allowed_algorithms_text(r.collective) + " only; found " +
                                            in_quotes(algo) +
                                            " (NCCL's example plugin never applies this line either)"});
    else if (!is_allowed(r.collective, r.algorithm, r.protocol))
      dropped.push_back({r.source_line, "protocol: " + algo + " takes simple only; found " +
                                            in_quotes(proto) +
                                            " (NCCL's example plugin never applies this line either)"});
    else
      return false;
    return true;
  });
  return dropped;
}

std::string format_nccl_csv(const std::vector<Rule>& rules) {
  std::vector<const Rule*> sorted;
  for (const auto& r : rules) sorted.push_back(&r);
  auto key = [](const Rule& r) {
    const CountRange none{0, 0};
    CountRange n = r.nodes.value_or(none), k = r.ranks.value_or(none), q = r.pipe_ops.value_or(none);
    const int reg = r.reg_buff ? (*r.reg_buff ? 2 : 1) : 0;
    return std::make_tuple(static_cast<int>(r.collective), n.min, n.max, k.min, k.max, r.min_bytes, q.min,
                           q.max, reg);
  };
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const Rule* a, const Rule* b) { return key(*a) < key(*b); });
  std::string out =
      "# NCCL example tuner plugin configuration, written by nccl-autotune.\n"
      "# " +
      std::string(kFormat) + "\n";
  for (const Rule* r : sorted) {
    if (r->chunk_bytes != 0)
      throw InputError(
          "", r->source_line,
          "chunk_bytes: expected none (NCCL's example-plugin CSV has no chunk size column); found " +
              format_byte_size(r->chunk_bytes));
    auto values = [&](const std::optional<CountRange>& range, const char* what) {
      std::vector<long long> v;
      if (!range) return std::vector<long long>{-1};
      if (range->max == std::numeric_limits<int>::max())
        throw InputError("", r->source_line,
                         std::string(what) +
                             ": expected a single count, a bounded range or any; found the open range " +
                             std::to_string(range->min) + "+, which the CSV format cannot express");
      for (long long i = range->min; i <= range->max && v.size() <= kMaxExpandedRows; ++i) v.push_back(i);
      return v;
    };
    auto nodes = values(r->nodes, "nodes");
    auto ranks = values(r->ranks, "ranks");
    auto pipes = values(r->pipe_ops, "pipe_ops");
    if (nodes.size() * ranks.size() * pipes.size() > kMaxExpandedRows)
      throw InputError("", r->source_line,
                       "nodes/ranks/pipe_ops: expected ranges that expand to at most 4096 CSV rows; found " +
                           std::to_string(nodes.size() * ranks.size() * pipes.size()) + " or more");
    // NCCL's example matches nodes and ranks only: a ranks-per-node condition becomes the (nodes, ranks)
    // pairs that meet it, and cannot be written at all without them.
    if (r->ranks_per_node && (!r->nodes || !r->ranks))
      throw InputError(
          "", r->source_line,
          "ranks_per_node: expected nodes and ranks beside it, which the CSV format can express; found "
          "a ranks-per-node condition alone");
    const bool conditions = r->has_call_conditions();
    const std::string reg = !r->reg_buff ? "-1" : (*r->reg_buff ? "1" : "0");
    for (long long n : nodes)
      for (long long k : ranks)
        for (long long q : pipes) {
          if (r->ranks_per_node && (k % n != 0 || !r->ranks_per_node->contains(static_cast<int>(k / n))))
            continue;
          out += std::string(kCollectives[static_cast<int>(r->collective)]) + "," +
                 std::to_string(r->min_bytes) + "," + std::to_string(r->max_bytes) + "," +
                 std::string(kAlgorithms[static_cast<int>(r->algorithm)]) + "," +
                 std::string(kProtocols[static_cast<int>(r->protocol)]) + "," +
                 std::to_string(r->channels == 0 ? -1 : r->channels) + "," + std::to_string(n) + "," +
                 std::to_string(k);
          if (conditions) out += "," + std::to_string(q) + "," + reg;
          out += "\n";
        }
  }
  return out;
}

}  // namespace autotune::profiles
