#pragma once
// The rules of a profile compiled for one communicator scale (nodes, ranks): per collective, disjoint byte
// segments sorted by their first byte, each holding the rules that cover it in priority order (a chain), so
// the plugin's per-collective lookup is a binary search that never allocates. Priority is input order: the
// first rule that covers the call and whose per-call conditions (numPipeOps, regBuff) hold wins, and a caller
// that finds its cost-table entry ruled out by NCCL moves on to the next one, as NCCL's example plugin walks
// its CSV lines. A validated TOML profile has at most one rule per call, so there order cannot matter.
// The search reads only a dense array of segment keys (8 bytes a segment, all collectives back to back) and
// touches the segment itself once, at the end: 1,000 rules' keys fit in 8 KiB of L1, and the search steps
// are branch-free, so a lookup costs the same whatever the sizes asked for (no mispredictions). A segment
// with one unconditioned rule, the usual case, costs two compares more than a plain range check.
// Immutable after compile(): find() may be called from any number of threads at once.

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::profiles {

struct CompiledRule {
  uint64_t min_bytes, max_bytes;  // inclusive: the segment's bytes (a chain's later entries repeat them)
  int32_t pipe_min, pipe_max;     // numPipeOps must lie in [pipe_min, pipe_max]; INT32_MIN..INT32_MAX = any
  int32_t channels;               // 0 = NCCL decides
  int32_t next;          // the next rule covering these bytes (an index for RuleTable::next), -1 none
  uint64_t chunk_bytes;  // 0 = NCCL's chunk size
  uint32_t source;       // the rule's index in the vector compile() was given
  int8_t algorithm;      // NCCL_ALGO_* id
  int8_t protocol;       // NCCL_PROTO_* id
  uint8_t reg_mask;      // bit 0: applies when regBuff is 0, bit 1: when 1, bit 2: when unknown (v2, v3)
  bool any_call;         // no per-call condition (getChunkSize, which is not told them, needs one)

  // reg_buff: 0 or 1 as NCCL passes it; anything else means "not known" (ABI v2 and v3 do not pass it).
  bool matches(int pipe_ops, int reg_buff) const noexcept {
    const unsigned reg_bit = static_cast<unsigned>(reg_buff) <= 1u ? static_cast<unsigned>(reg_buff) : 2u;
    return pipe_ops >= pipe_min && pipe_ops <= pipe_max && ((reg_mask >> reg_bit) & 1u) != 0;
  }
};

// regBuff as the ABI versions without it report it to CompiledRule::matches.
inline constexpr int kRegBuffUnknown = -1;

class RuleTable {
 public:
  // The most rules one segment keeps; rules beyond it in a pile of overlapping CSV lines are never reached.
  static constexpr size_t kMaxChain = 16;

  RuleTable() = default;
  // Keeps the rules that apply to (nodes, ranks); where several cover the same bytes, the earlier one in
  // `rules` comes first in the chain.
  static RuleTable compile(const std::vector<Rule>& rules, const CommShape& at);

  // O(log n), no allocation, noexcept: the first rule of the chain covering (collective id, bytes), whatever
  // its conditions; nullptr when none does. collective_id is NCCL's ncclFunc_t; out-of-range ids return
  // nullptr. Pointers stay valid as long as the table. Defined below, in the header, so the plugin's
  // getCollInfo inlines it.
  inline const CompiledRule* find(int collective_id, uint64_t bytes) const noexcept;
  // The next rule of the same chain, or nullptr.
  const CompiledRule* next(const CompiledRule* r) const noexcept {
    return r->next < 0 ? nullptr : &rules_[static_cast<size_t>(r->next)];
  }
  // The first rule of the chain whose per-call conditions hold, or nullptr.
  const CompiledRule* match(int collective_id, uint64_t bytes, int pipe_ops, int reg_buff) const noexcept {
    for (const CompiledRule* r = find(collective_id, bytes); r != nullptr; r = next(r))
      if (r->matches(pipe_ops, reg_buff)) return r;
    return nullptr;
  }

  // How many of the input rules the table can reach (each counted once).
  size_t size() const noexcept { return rule_count_; }
  // Rules cut from chains longer than kMaxChain, counted once per segment they were cut from.
  size_t dropped() const noexcept { return dropped_; }

 private:
  // Collective c owns segments [begin_[c], begin_[c + 1]); segment i's first rule is rules_[i] and
  // min_bytes_[i] == rules_[i].min_bytes. The later rules of every chain follow all segments in rules_.
  std::array<uint32_t, nccl::kNumCollectives + 1> begin_{};
  std::vector<uint64_t> min_bytes_;
  std::vector<CompiledRule> rules_;
  size_t rule_count_ = 0;
  size_t dropped_ = 0;
};

inline const CompiledRule* RuleTable::find(int collective_id, uint64_t bytes) const noexcept {
  // One unsigned compare rejects negative ids too.
  if (static_cast<unsigned>(collective_id) >= static_cast<unsigned>(nccl::kNumCollectives)) return nullptr;
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
  // Segments are disjoint, so the one starting at the last key <= bytes is the only candidate.
  const CompiledRule& r = rules_[static_cast<size_t>(base - min_bytes_.data())];
  return (*base <= bytes && bytes <= r.max_bytes) ? &r : nullptr;
}

// The scales the rules name explicitly: each distinct (nodes, ranks, ranks per node) bound triple of a rule
// that has a nodes or ranks bound (an absent bound is the full range). Sorted, without duplicates.
struct NamedScale {
  CountRange nodes;
  CountRange ranks;
  CountRange ranks_per_node;
  bool contains(const CommShape& c) const;
  bool operator==(const NamedScale&) const = default;
};
std::vector<NamedScale> named_scales(const std::vector<Rule>& rules);

// Communicators of different kinds get different rules: one rank per node (pipeline and data-parallel
// groups), part of a node (tensor-parallel groups smaller than a node), every GPU of a node. `gpus_per_node`
// is the calibrated node's (0: unknown, then anything above one rank per node is "part").
enum class RankClass { one_per_node, part_of_node, whole_node, mixed };
RankClass rank_class(int ranks_per_node, int gpus_per_node);
RankClass rank_class(const CommShape& c, int gpus_per_node);

// For the "nearest" policy: nullopt when some named scale contains `at` (its own rules apply), when the rules
// name no scale at all, or when none is of `at`'s rank class (rules of another kind of communicator never
// apply: a 4 x 1 data-parallel group does not borrow the rules of 4 x 8). Otherwise the even shape, within
// the nearest named scale of the same class, closest to `at`. Distance is measured in powers of two, nodes
// first (crossing the network matters more than ranks per node), then ranks; ties go to the smaller scale.
std::optional<CommShape> nearest_named_scale(const std::vector<Rule>& rules, const CommShape& at,
                                             int gpus_per_node);

}  // namespace autotune::profiles
