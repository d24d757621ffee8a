#include "profiles/rule_table.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace autotune::profiles {

using nccl::kNumCollectives;
namespace {

struct Indexed {
  CompiledRule rule;
  size_t order;  // position in the input, the second tie-breaker
};

int clamp_to(const CountRange& r, int n) {
  return std::clamp(n, r.min, r.max);
}

double log2_distance(int a, int b) {
  if (a == b) return 0.0;
  // Counts below 1 are meaningless for a scale; treat them as 1 so log2 stays finite.
  return std::fabs(std::log2(std::max(a, 1)) - std::log2(std::max(b, 1)));
}

}  // namespace

RuleTable RuleTable::compile(const std::vector<Rule>& rules, int nodes, int ranks) {
  std::array<std::vector<Indexed>, kNumCollectives> staged;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Rule& r = rules[i];
    if (!r.applies_to(nodes, ranks) || r.min_bytes > r.max_bytes) continue;
    int c = static_cast<int>(r.collective);
    if (c < 0 || c >= kNumCollectives) continue;
    staged[c].push_back({CompiledRule{r.min_bytes, r.max_bytes, static_cast<int8_t>(r.algorithm),
                                      static_cast<int8_t>(r.protocol), static_cast<int32_t>(r.channels)},
                         i});
  }
  RuleTable table;
  for (int c = 0; c < kNumCollectives; ++c) {
    auto& v = staged[c];
    std::sort(v.begin(), v.end(), [](const Indexed& a, const Indexed& b) {
      return std::tie(a.rule.min_bytes, a.order) < std::tie(b.rule.min_bytes, b.order);
    });
    const size_t first = table.rules_.size();
    table.begin_[c] = static_cast<uint32_t>(first);
    for (const Indexed& item : v) {
      CompiledRule r = item.rule;
      if (table.rules_.size() > first) {
        uint64_t prev_max = table.rules_.back().max_bytes;
        if (r.min_bytes <= prev_max) {
          // Overlap: the earlier range keeps the shared bytes; this one keeps what lies beyond it, if
          // anything.
          if (r.max_bytes <= prev_max) continue;
          r.min_bytes = prev_max + 1;
        }
      }
      table.rules_.push_back(r);
      table.min_bytes_.push_back(r.min_bytes);
    }
  }
  table.begin_[kNumCollectives] = static_cast<uint32_t>(table.rules_.size());
  table.rules_.shrink_to_fit();
  table.min_bytes_.shrink_to_fit();
  return table;
}

std::vector<NamedScale> named_scales(const std::vector<Rule>& rules) {
  std::vector<NamedScale> out;
  for (const Rule& r : rules) {
    if (!r.nodes && !r.ranks) continue;
    out.push_back(NamedScale{r.nodes.value_or(CountRange{}), r.ranks.value_or(CountRange{})});
  }
  auto key = [](const NamedScale& s) { return std::tie(s.nodes.min, s.nodes.max, s.ranks.min, s.ranks.max); };
  std::sort(out.begin(), out.end(),
            [&](const NamedScale& a, const NamedScale& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<Scale> nearest_named_scale(const std::vector<Rule>& rules, Scale at) {
  std::vector<NamedScale> scales = named_scales(rules);
  std::optional<Scale> best;
  double best_nodes = 0.0, best_ranks = 0.0;
  for (const NamedScale& s : scales) {
    if (s.contains(at)) return std::nullopt;
    Scale p{clamp_to(s.nodes, at.nodes), clamp_to(s.ranks, at.ranks)};
    double dn = log2_distance(p.nodes, at.nodes), dr = log2_distance(p.ranks, at.ranks);
    bool better = !best || std::tie(dn, dr, p.nodes, p.ranks) <
                               std::tie(best_nodes, best_ranks, best->nodes, best->ranks);
    if (better) best = p, best_nodes = dn, best_ranks = dr;
  }
  return best;
}

}  // namespace autotune::profiles
