#pragma once
// The rules of a profile compiled for one communicator scale (nodes, ranks): per collective, disjoint byte
// ranges sorted by min_bytes, so the plugin's per-collective lookup is a binary search that never allocates.
// The search reads only a dense array of min_bytes keys (8 bytes a rule, all collectives back to back) and
// touches the rule itself once, at the end: 1,000 rules' keys fit in 8 KiB of L1, and the search steps are
// branch-free, so a lookup costs the same whatever the sizes asked for (no mispredictions).
// Immutable after compile(): find() may be called from any number of threads at once.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::profiles {

using nccl::kNumCollectives;

struct CompiledRule {
  uint64_t min_bytes, max_bytes;  // inclusive
  int8_t algorithm;               // NCCL_ALGO_* id
  int8_t protocol;                // NCCL_PROTO_* id
  int32_t channels;               // 0 = NCCL decides
};

class RuleTable {
 public:
  RuleTable() = default;
  // Keeps the rules that apply to (nodes, ranks), per collective sorted by min_bytes. A validated profile has
  // no overlaps at one scale; should overlapping rules arrive anyway, the one with the lower min_bytes (then
  // the earlier one in `rules`) keeps the shared bytes, so lookups stay deterministic.
  static RuleTable compile(const std::vector<Rule>& rules, int nodes, int ranks);

  // O(log n), no allocation, noexcept; nullptr when no rule covers (collective id, bytes). collective_id is
  // NCCL's ncclFunc_t; out-of-range ids return nullptr. The pointer stays valid as long as the table.
  // Defined below, in the header, so the plugin's getCollInfo inlines it.
  inline const CompiledRule* find(int collective_id, uint64_t bytes) const noexcept;
  size_t size() const noexcept { return rules_.size(); }

 private:
  // Collective c owns positions [begin_[c], begin_[c + 1]) of both arrays; min_bytes_[i] ==
  // rules_[i].min_bytes.
  std::array<uint32_t, kNumCollectives + 1> begin_{};
  std::vector<uint64_t> min_bytes_;
  std::vector<CompiledRule> rules_;
};

inline const CompiledRule* RuleTable::find(int collective_id, uint64_t bytes) const noexcept {
  // One unsigned compare rejects negative ids too.
  if (static_cast<unsigned>(collective_id) >= static_cast<unsigned>(kNumCollectives)) return nullptr;
  const size_t first = begin_[collective_id];
  size_t n = begin_[collective_id + 1] - first;
  if (n == 0) return nullptr;
  // The last key <= bytes, found without a data-dependent branch: each step halves n and moves `base` up
  // by a conditional move (GCC and Clang emit cmov for this form), so the loop runs the same
  // ceil(log2 n) times whatever `bytes` is and nothing is mispredicted. When even the first key is above
  // `bytes`, base stays there and the check below fails.
  const uint64_t* base = min_bytes_.data() + first;
  while (n > 1) {
    const size_t half = n / 2;
    base = base[half] <= bytes ? base + half : base;
    n -= half;
  }
  // Ranges are disjoint, so the one starting at the last key <= bytes is the only candidate.
  const CompiledRule& r = rules_[static_cast<size_t>(base - min_bytes_.data())];
  return (*base <= bytes && bytes <= r.max_bytes) ? &r : nullptr;
}

// A communicator scale.
struct Scale {
  int nodes = 1;
  int ranks = 1;
  bool operator==(const Scale&) const = default;
};

// The scales the rules name explicitly: each distinct (nodes, ranks) bound pair of a rule that has a nodes or
// ranks bound (an absent bound is the full range). Sorted, without duplicates.
struct NamedScale {
  CountRange nodes;
  CountRange ranks;
  bool contains(Scale s) const { return nodes.contains(s.nodes) && ranks.contains(s.ranks); }
  bool operator==(const NamedScale&) const = default;
};
std::vector<NamedScale> named_scales(const std::vector<Rule>& rules);

// For the "nearest" policy: nullopt when some named scale contains `at` (its own rules apply) or when the
// rules name no scale at all; otherwise the point of the nearest named scale closest to `at`. Distance is
// measured in powers of two, nodes first (crossing the network matters more than ranks per node), then
// ranks; ties go to the smaller scale.
std::optional<Scale> nearest_named_scale(const std::vector<Rule>& rules, Scale at);

}  // namespace autotune::profiles
