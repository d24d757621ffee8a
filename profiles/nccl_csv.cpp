#include "profiles/nccl_csv.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <tuple>

#include "common/input_error.hpp"
#include "common/name_table.hpp"

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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

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

}  // namespace

std::vector<Rule> parse_nccl_csv(std::string_view text, std::string_view file_name) {
  std::vector<Rule> rules;
  std::string file(file_name);
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') {
      if (end == text.size()) break;
      continue;
    }
    std::vector<std::string_view> f;
    size_t start = 0;
    while (true) {
      size_t comma = line.find(',', start);
      f.push_back(
          trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    auto fail = [&](const std::string& column, const std::string& msg) -> void {
      throw InputError(file, line_no, column + ": " + msg);
    };
    if (f.size() < 8 || f.size() > 10)
      fail("row",
           "expected 8 to 10 fields (collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,"
           "nRanks[,numPipeOps[,regBuff]]); found " +
               std::to_string(f.size()));
    Rule r;
    r.source_line = line_no;
    auto coll = index_of(kCollectives, f[0]);
    if (!coll)
      fail("collective_type",
           "expected one of " + join_names(kCollectives) + "; found \"" + std::string(f[0]) + "\"");
    r.collective = static_cast<Collective>(*coll);
    auto lo = to_unsigned(f[1]), hi = to_unsigned(f[2]);
    if (!lo) fail("min_bytes", "expected a byte count >= 0; found \"" + std::string(f[1]) + "\"");
    if (!hi) fail("max_bytes", "expected a byte count >= 0; found \"" + std::string(f[2]) + "\"");
    if (*lo > *hi)
      fail("max_bytes",
           "expected at least min_bytes (" + std::to_string(*lo) + "); found " + std::to_string(*hi));
    r.min_bytes = *lo;
    r.max_bytes = *hi;
    auto algo = index_of(kAlgorithms, f[3]);
    if (!algo)
      fail("algorithm",
           "expected one of " + join_names(kAlgorithms) + "; found \"" + std::string(f[3]) + "\"");
    r.algorithm = static_cast<Algorithm>(*algo);
    auto proto = index_of(kProtocols, f[4]);
    if (!proto)
      fail("protocol", "expected one of " + join_names(kProtocols) + "; found \"" + std::string(f[4]) + "\"");
    r.protocol = static_cast<Protocol>(*proto);
    if (!is_allowed(r.collective, r.algorithm))
      fail("algorithm", "expected one of " + allowed_algorithms_text(r.collective) +
                            " (what NCCL allows for " + std::string(kCollectives[*coll]) + "); found \"" +
                            std::string(f[3]) + "\"");
    if (!is_allowed(r.collective, r.algorithm, r.protocol))
      fail("protocol", "expected simple (" + std::string(f[3]) + " takes Simple only); found \"" +
                           std::string(f[4]) + "\"");
    auto channels = to_signed(f[5]);
    if (!channels || !(*channels == -1 || (*channels >= 1 && *channels <= 64)))
      fail("channels", "expected -1 (NCCL decides) or 1..64; found \"" + std::string(f[5]) + "\"");
    r.channels = *channels == -1 ? 0 : static_cast<int>(*channels);
    auto count = [&](size_t i, const char* column) -> std::optional<CountRange> {
      auto v = to_signed(f[i]);
      if (!v || !(*v == -1 || (*v >= 1 && *v <= std::numeric_limits<int>::max())))
        fail(column, "expected -1 (any) or a count >= 1; found \"" + std::string(f[i]) + "\"");
      if (*v == -1) return std::nullopt;
      return CountRange{static_cast<int>(*v), static_cast<int>(*v)};
    };
    r.nodes = count(6, "nNodes");
    r.ranks = count(7, "nRanks");
    const char* conditions[] = {"numPipeOps", "regBuff"};
    for (size_t i = 8; i < f.size(); ++i)
      if (f[i] != "-1")
        fail(conditions[i - 8], "expected -1: nccl-autotune profiles cannot condition a rule on " +
                                    std::string(conditions[i - 8]) + "; found \"" + std::string(f[i]) + "\"");
    rules.push_back(r);
    if (end == text.size()) break;
  }
  return rules;
}

std::string format_nccl_csv(const std::vector<Rule>& rules) {
  std::vector<const Rule*> sorted;
  for (const auto& r : rules) sorted.push_back(&r);
  auto key = [](const Rule& r) {
    const CountRange none{0, 0};
    CountRange n = r.nodes.value_or(none), k = r.ranks.value_or(none);
    return std::make_tuple(static_cast<int>(r.collective), n.min, n.max, k.min, k.max, r.min_bytes);
  };
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const Rule* a, const Rule* b) { return key(*a) < key(*b); });
  std::string out =
      "# NCCL example tuner plugin configuration, written by nccl-autotune.\n"
      "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n";
  for (const Rule* r : sorted) {
    auto values = [&](const std::optional<CountRange>& range, const char* what) {
      std::vector<long long> v;
      if (!range) return std::vector<long long>{-1};
      if (range->max == std::numeric_limits<int>::max())
        throw InputError("", r->source_line,
                         std::string(what) +
                             ": expected a single count, a bounded range or any; found the open range " +
                             std::to_string(range->min) + "+, which the CSV format cannot express");
      for (long long i = range->min; i <= range->max; ++i) v.push_back(i);
      return v;
    };
    auto nodes = values(r->nodes, "nodes");
    auto ranks = values(r->ranks, "ranks");
    if (nodes.size() * ranks.size() > kMaxExpandedRows)
      throw InputError("", r->source_line,
                       "nodes/ranks: expected ranges that expand to at most 4096 CSV rows; found " +
                           std::to_string(nodes.size() * ranks.size()));
    for (long long n : nodes)
      for (long long k : ranks) {
        out += std::string(kCollectives[static_cast<int>(r->collective)]) + "," +
               std::to_string(r->min_bytes) + "," + std::to_string(r->max_bytes) + "," +
               std::string(kAlgorithms[static_cast<int>(r->algorithm)]) + "," +
               std::string(kProtocols[static_cast<int>(r->protocol)]) + "," +
               std::to_string(r->channels == 0 ? -1 : r->channels) + "," + std::to_string(n) + "," +
               std::to_string(k) + "\n";
      }
  }
  return out;
}

}  // namespace autotune::profiles
