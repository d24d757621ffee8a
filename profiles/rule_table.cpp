#include "profiles/rule_table.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace autotune::profiles {

using nccl::kNumCollectives;
namespace {

struct Item {
  uint64_t lo, hi;
  uint32_t source;  // index in the input: the priority
};

int clamp_to(const CountRange& r, int n) {
  return std::clamp(n, r.min, r.max);
}

double log2_distance(int a, int b) {
  if (a == b) return 0.0;
  // Counts below 1 are meaningless for a scale; treat them as 1 so log2 stays finite.
  return std::fabs(std::log2(std::max(a, 1)) - std::log2(std::max(b, 1)));
}

CompiledRule entry(const Rule& r, uint32_t source, uint64_t lo, uint64_t hi) {
  CompiledRule c{};
  c.min_bytes = lo;
  c.max_bytes = hi;
  c.pipe_min = r.pipe_ops ? r.pipe_ops->min : INT32_MIN;
  c.pipe_max = r.pipe_ops ? r.pipe_ops->max : INT32_MAX;
  c.channels = static_cast<int32_t>(r.channels);
  c.next = -1;
  c.chunk_bytes = r.chunk_bytes;
  c.source = source;
  c.algorithm = static_cast<int8_t>(r.algorithm);
  c.protocol = static_cast<int8_t>(r.protocol);
  c.reg_mask = !r.reg_buff ? 0b111 : (*r.reg_buff ? 0b010 : 0b001);
  c.any_call = !r.has_call_conditions();
  return c;
}

// A gap segment's placeholder rule (never returned: its head says none).
CompiledRule gap_entry(uint64_t lo, uint64_t hi) {
  CompiledRule c{};
  c.min_bytes = lo;
  c.max_bytes = hi;
  c.next = -1;
  c.algorithm = -1;
  c.protocol = -1;
  return c;
}

SegmentHead head_of(const CompiledRule& r, bool chained) {
  const bool one = r.any_call && !chained;
  return {r.algorithm, r.protocol, one ? SegmentHead::one : SegmentHead::chain, r.channels};
}

// One segment of bytes and the rules covering it, in priority order.
struct Segment {
  uint64_t lo, hi;
  std::vector<uint32_t> chain;
};

// The general case, for rules that overlap (NCCL example-plugin CSV files): cut the bytes at every rule's
// first byte and one past its last, and give each piece the rules covering it, in input order. Neighbouring
// pieces with the same rules merge again.
std::vector<Segment> split_overlapping(std::vector<Item> items, size_t max_chain, size_t* dropped) {
  std::vector<uint64_t> cuts;
  bool reaches_end = false;
  for (const Item& it : items) {
    cuts.push_back(it.lo);
    if (it.hi == UINT64_MAX)
      reaches_end = true;
    else
      cuts.push_back(it.hi + 1);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.lo < b.lo; });
  std::vector<Item> by_end = items;
  std::sort(by_end.begin(), by_end.end(), [](const Item& a, const Item& b) { return a.hi < b.hi; });
  std::vector<uint32_t> active;  // sorted by source: the priority order
  std::vector<Segment> out;
  size_t next_start = 0, next_end = 0;
  for (size_t k = 0; k < cuts.size(); ++k) {
    const uint64_t lo = cuts[k];
    const bool last = k + 1 == cuts.size();
    if (last && !reaches_end) break;
    const uint64_t hi = last ? UINT64_MAX : cuts[k + 1] - 1;
    while (next_end < by_end.size() && by_end[next_end].hi < lo) {
      auto it = std::lower_bound(active.begin(), active.end(), by_end[next_end].source);
      if (it != active.end() && *it == by_end[next_end].source) active.erase(it);
      ++next_end;
    }
    while (next_start < items.size() && items[next_start].lo <= lo) {
      active.insert(std::lower_bound(active.begin(), active.end(), items[next_start].source),
                    items[next_start].source);
      ++next_start;
    }
    if (active.empty()) continue;
    std::vector<uint32_t> chain(active.begin(), active.begin() + std::min(active.size(), max_chain));
    *dropped += active.size() - chain.size();
    if (!out.empty() && out.back().hi + 1 == lo && out.back().chain == chain) {
      out.back().hi = hi;
      continue;
    }
    out.push_back({lo, hi, std::move(chain)});
  }
  return out;
}

// The indices of the rules applying at `at`, grouped by collective (a counting sort): collective c's are
// [start[c], start[c + 1]). A cold init pays for every fresh page it touches, so nothing here is copied twice
// or grown by doubling.
std::vector<uint32_t> indices_by_collective(const std::vector<Rule>& rules, const CommShape& at,
                                            std::array<uint32_t, kNumCollectives + 1>& start) {
  auto applies = [&](const Rule& r) {
    const int c = static_cast<int>(r.collective);
    return r.applies_to(at) && r.min_bytes <= r.max_bytes && c >= 0 && c < kNumCollectives;
  };
  for (const Rule& r : rules)
    if (applies(r)) ++start[static_cast<size_t>(r.collective) + 1];
  for (int c = 0; c < kNumCollectives; ++c) start[c + 1] += start[c];
  std::vector<uint32_t> order(start[kNumCollectives]);
  std::array<uint32_t, kNumCollectives> fill{};
  for (int c = 0; c < kNumCollectives; ++c) fill[c] = start[c];
  for (size_t i = 0; i < rules.size(); ++i)
    if (applies(rules[i])) order[fill[static_cast<size_t>(rules[i].collective)]++] = static_cast<uint32_t>(i);
  return order;
}

// Appends the chains' later rules after every segment, their links (indices into `later`) rebased onto
// `rules`.
void append_chains(std::vector<CompiledRule>& rules, std::vector<CompiledRule>& later) {
  if (later.empty()) return;
  const int32_t base = static_cast<int32_t>(rules.size());
  for (CompiledRule& r : rules)
    if (r.next >= 0) r.next += base;
  for (CompiledRule& r : later)
    if (r.next >= 0) r.next += base;
  rules.insert(rules.end(), later.begin(), later.end());
}

}  // namespace

RuleTable RuleTable::compile(const std::vector<Rule>& rules, const CommShape& at) {
  std::array<uint32_t, kNumCollectives + 1> start{};
  std::vector<uint32_t> order = indices_by_collective(rules, at, start);

  RuleTable table;
  // Gap segments at most double the segments (one before each, one after the last).
  table.rules_.reserve(2 * order.size() + kNumCollectives);
  table.heads_.reserve(2 * order.size() + kNumCollectives);
  std::vector<CompiledRule> later;  // the chains' second and further rules, appended after all segments
  std::vector<char> reached(rules.size(), 0);
  std::array<uint32_t, kNumCollectives + 1> segments_at{};  // collective c's segments start here
  auto by_start = [&](uint32_t a, uint32_t b) {
    return rules[a].min_bytes != rules[b].min_bytes ? rules[a].min_bytes < rules[b].min_bytes : a < b;
  };
  // Appends a segment's first rule and head, after a gap segment for the bytes since the previous one (or
  // since 0), so a collective's segments tile the sizes.
  uint64_t next_lo = 0;
  bool covered_to_end = false;
  auto place = [&](const CompiledRule& e, bool chained) {
    if (e.min_bytes > next_lo) {
      table.rules_.push_back(gap_entry(next_lo, e.min_bytes - 1));
      table.heads_.push_back({-1, -1, SegmentHead::none, 0});
    }
    table.rules_.push_back(e);
    table.heads_.push_back(head_of(e, chained));
    covered_to_end = e.max_bytes == UINT64_MAX;
    next_lo = e.max_bytes + 1;
  };
  for (int c = 0; c < kNumCollectives; ++c) {
    const auto first = order.begin() + start[c], last = order.begin() + start[c + 1];
    segments_at[c] = static_cast<uint32_t>(table.rules_.size());
    next_lo = 0;
    covered_to_end = false;
    if (!std::is_sorted(first, last, by_start)) std::sort(first, last, by_start);
    bool disjoint = true;
    for (auto it = first; it != last && disjoint; ++it)
      disjoint = it == first || rules[*it].min_bytes > rules[*(it - 1)].max_bytes;
    if (disjoint) {
      // The usual case (a validated profile at one scale): one segment per rule, no chains.
      for (auto it = first; it != last; ++it) {
        const Rule& r = rules[*it];
        place(entry(r, *it, r.min_bytes, r.max_bytes), false);
        reached[*it] = 1;
      }
    } else {
      std::vector<Item> items;
      for (auto it = first; it != last; ++it)
        items.push_back({rules[*it].min_bytes, rules[*it].max_bytes, *it});
      for (Segment& seg : split_overlapping(std::move(items), kMaxChain, &table.dropped_)) {
        place(entry(rules[seg.chain[0]], seg.chain[0], seg.lo, seg.hi), seg.chain.size() > 1);
        reached[seg.chain[0]] = 1;
        int32_t* link = &table.rules_.back().next;
        for (size_t k = 1; k < seg.chain.size(); ++k) {
          *link = static_cast<int32_t>(later.size());  // rebased below, once the segments are all placed
          later.push_back(entry(rules[seg.chain[k]], seg.chain[k], seg.lo, seg.hi));
          reached[seg.chain[k]] = 1;
          link = &later.back().next;
        }
      }
    }
    if (first != last && !covered_to_end) {
      table.rules_.push_back(gap_entry(next_lo, UINT64_MAX));
      table.heads_.push_back({-1, -1, SegmentHead::none, 0});
    }
  }
  segments_at[kNumCollectives] = static_cast<uint32_t>(table.rules_.size());
  // sum over levels of ceil(n / 16^l) <= n / 15 + levels: one allocation, no regrowth.
  table.blocks_.reserve(segments_at[kNumCollectives] / 15 + kMaxLevels * kNumCollectives);
  for (int c = 0; c < kNumCollectives; ++c)
    table.build_tree(c, segments_at[c], segments_at[c + 1] - segments_at[c]);
  append_chains(table.rules_, later);
  table.rule_count_ = static_cast<size_t>(std::count(reached.begin(), reached.end(), 1));
  return table;
}

void RuleTable::build_tree(int collective, uint32_t first, uint32_t count) {
  Tree& t = trees_[static_cast<size_t>(collective)];
  t.first = first;
  t.count = count;
  t.root.fill(UINT64_MAX);
  // Bottom up: level 0 holds the segments' first bytes; each level above holds the first key of every block
  // of the level below, until at most kRootKeys keys remain: those are the root. Read in place (no copy of
  // the keys: a cold init pays for every fresh page), from the segments, then from the level just written.
  size_t n = count;  // keys of the level being written
  for (uint32_t level = 0; n > 0; ++level) {
    const size_t below = level == 0 ? 0 : t.level_at[level - 1];
    auto key = [&](size_t i) { return level == 0 ? rules_[first + i].min_bytes : blocks_[below + i].key[0]; };
    t.levels = level + 1;
    if (n <= kRootKeys) {
      for (size_t i = 0; i < n; ++i) t.root[i] = key(i);
      return;
    }
    const size_t n_blocks = (n + kFanout - 1) / kFanout;
    t.level_at[level] = static_cast<uint32_t>(blocks_.size());
    for (size_t b = 0; b < n_blocks; ++b) {
      KeyBlock& block = blocks_.emplace_back();
      for (size_t j = 0; j < kFanout; ++j)
        block.key[j] = b * kFanout + j < n ? key(b * kFanout + j) : UINT64_MAX;
    }
    n = n_blocks;
  }
}

bool NamedScale::contains(const CommShape& c) const {
  return nodes.contains(c.nodes) && ranks.contains(c.ranks) &&
         (ranks_per_node == CountRange{} ||
          (c.min_ranks_per_node > 0 && ranks_per_node.contains(c.min_ranks_per_node) &&
           ranks_per_node.contains(c.max_ranks_per_node)));
}

std::vector<NamedScale> named_scales(const std::vector<Rule>& rules) {
  std::vector<NamedScale> out;
  for (const Rule& r : rules) {
    if (!r.nodes && !r.ranks) continue;
    NamedScale s{r.nodes.value_or(CountRange{}), r.ranks.value_or(CountRange{}),
                 r.ranks_per_node.value_or(CountRange{})};
    // A calibrated profile names a scale on every rule, a few scales in runs of many rules: skipping a repeat
    // of the last one keeps the sort below to a handful of entries (the plugin's init calls this).
    if (out.empty() || !(out.back() == s)) out.push_back(s);
  }
  auto key = [](const NamedScale& s) {
    return std::tie(s.nodes.min, s.nodes.max, s.ranks.min, s.ranks.max, s.ranks_per_node.min,
                    s.ranks_per_node.max);
  };
  std::sort(out.begin(), out.end(),
            [&](const NamedScale& a, const NamedScale& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

RankClass rank_class(int per_node, int gpus_per_node) {
  if (per_node <= 1) return RankClass::one_per_node;
  if (gpus_per_node > 0 && per_node >= gpus_per_node) return RankClass::whole_node;
  return RankClass::part_of_node;
}

RankClass rank_class(const CommShape& c, int gpus_per_node) {
  if (c.min_ranks_per_node <= 0) return RankClass::mixed;  // unknown per-node counts
  const RankClass lo = rank_class(c.min_ranks_per_node, gpus_per_node);
  return lo == rank_class(c.max_ranks_per_node, gpus_per_node) ? lo : RankClass::mixed;
}

std::optional<CommShape> nearest_named_scale(const std::vector<Rule>& rules, const CommShape& at,
                                             int gpus_per_node) {
  const RankClass want = rank_class(at, gpus_per_node);
  std::optional<CommShape> best;
  double best_nodes = 0.0, best_ranks = 0.0;
  for (const NamedScale& s : named_scales(rules)) {
    if (s.contains(at)) return std::nullopt;
    if (want == RankClass::mixed) continue;
    // The even shape of this scale nearest to `at`, and whether it is of `at`'s kind.
    const int nodes = clamp_to(s.nodes, at.nodes);
    const int per_node = clamp_to(s.ranks_per_node, std::max(1, at.max_ranks_per_node));
    const int ranks = clamp_to(s.ranks, nodes * per_node);
    if (ranks % nodes != 0 || rank_class(ranks / nodes, gpus_per_node) != want) continue;
    const CommShape p = CommShape::of(nodes, ranks);
    const double dn = log2_distance(p.nodes, at.nodes), dr = log2_distance(p.ranks, at.ranks);
    const bool better = !best || std::tie(dn, dr, p.nodes, p.ranks) <
                                     std::tie(best_nodes, best_ranks, best->nodes, best->ranks);
    if (better) best = p, best_nodes = dn, best_ranks = dr;
  }
  return best;
}

}  // namespace autotune::profiles
