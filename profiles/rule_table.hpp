#pragma once
// The rules of a profile compiled for one communicator scale (nodes, ranks): per collective, disjoint byte
// segments sorted by their first byte, each holding the rules that cover it in priority order (a chain), so
// the plugin's per-collective lookup is a short tree walk that never allocates. Priority is input order: the
// first rule that covers the call and whose per-call conditions (numPipeOps, regBuff) hold wins, and a caller
// that finds its cost-table entry ruled out by NCCL moves on to the next one, as NCCL's example plugin walks
// its CSV lines. A validated TOML profile has at most one rule per call, so there order cannot matter.
// The search reads a static B+-tree of the segments' first bytes (an "S-tree"): nodes of 16 keys in 128-byte
// aligned blocks (two cache lines), level 0 the keys themselves, each level above the first key of every
// block below, up to a root of at most 64 keys kept in the table itself. A lookup counts, per level, the keys
// <= bytes in one node (two rounds of independent compares, no data-dependent branch; see segment()) to pick
// the child: 1,000 segments take 2 levels and 10,000 take 3, where a binary search took a dependent chain of
// 10 and 14 load-compare steps.
// The segments tile all sizes: gap segments (no rule) fill the bytes no rule covers, from 0 to 2^64 - 1, so
// the segment found always holds `bytes` and no range check follows the walk. Beside each segment sits an
// 8-byte head (SegmentHead: algorithm, protocol, channels and whether the chain is one unconditioned rule):
// the usual call reads the tree's blocks and one head, and the 48-byte CompiledRule only when the chain has
// per-call conditions or more than one rule. At 1,000 segments keys and heads take 17 KB, inside L1.
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

// What a per-collective call needs of a segment in the usual case, 8 bytes, kept apart from the rules so the
// lookup touches little memory. `kind` says how far to read: none (a gap: no rule covers these bytes), one
// (a single rule without per-call conditions: algorithm, protocol and channels here are all of it) or chain
// (read the CompiledRules, RuleTable::chain; the other fields are then the first rule's, unused).
struct SegmentHead {
  enum Kind : uint8_t { none = 0, one = 1, chain = 2 };
  int8_t algorithm;
  int8_t protocol;
  Kind kind;
  int32_t channels;  // 0 = NCCL decides
};
static_assert(sizeof(SegmentHead) == 8);

class RuleTable {
 public:
  // The most rules one segment keeps; rules beyond it in a pile of overlapping CSV lines are never reached.
  static constexpr size_t kMaxChain = 16;

  RuleTable() = default;
  // Keeps the rules that apply to (nodes, ranks); where several cover the same bytes, the earlier one in
  // `rules` comes first in the chain.
  static RuleTable compile(const std::vector<Rule>& rules, const CommShape& at);

  // O(log16 n), no allocation, noexcept: the head of the segment holding (collective id, bytes), a gap's
  // included; nullptr only when the collective has no rule at all. collective_id is NCCL's ncclFunc_t;
  // out-of-range ids return nullptr. Pointers stay valid as long as the table. Defined below, in the header,
  // so the plugin's getCollInfo inlines it.
  [[gnu::always_inline]] inline const SegmentHead* segment(int collective_id, uint64_t bytes) const noexcept;
  // The first rule of a segment's chain, nullptr for a gap. Reads only the head (no rule) to decide.
  const CompiledRule* chain(const SegmentHead* h) const noexcept {
    return h->kind == SegmentHead::none ? nullptr : &rules_[static_cast<size_t>(h - heads_.data())];
  }
  // The first rule of the chain covering (collective id, bytes), whatever its conditions; nullptr when none
  // does.
  const CompiledRule* find(int collective_id, uint64_t bytes) const noexcept {
    const SegmentHead* h = segment(collective_id, bytes);
    return h ? chain(h) : nullptr;
  }
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
  // One tree node: 16 keys, ascending, padded with UINT64_MAX; 128 bytes on a 64-byte boundary, so a node is
  // exactly two cache lines.
  struct alignas(64) KeyBlock {
    uint64_t key[16];
  };
  static constexpr size_t kFanout = 16;
  // 16^8 = 2^32 leaves: enough for any segment count a uint32_t indexes.
  static constexpr size_t kMaxLevels = 8;
  // Collective c's segments are heads_ (and rules_) [first, first + count), sorted by min_bytes, the first
  // starting at 0 and the last ending at 2^64 - 1; its tree has `levels` levels (0 when count == 0), level
  // l's blocks start at blocks_[level_at[l]] for l < levels - 1, level 0 being the leaves (min_bytes of
  // every segment); the top level, up to kRootKeys keys, is `root`, kept here so the walk starts without a
  // load of where it is.
  static constexpr size_t kRootKeys = 64;
  struct Tree {
    alignas(64) std::array<uint64_t, kRootKeys> root{};  // ascending, padded with UINT64_MAX
    uint32_t first = 0, count = 0, levels = 0;
    std::array<uint32_t, kMaxLevels> level_at{};
  };
  void build_tree(int collective, uint32_t first, uint32_t count);

  std::array<Tree, nccl::kNumCollectives> trees_{};
  std::vector<KeyBlock> blocks_;
  std::vector<SegmentHead> heads_;  // one per segment, gaps included
  // Every chain's first rule is its segment (rules_[i] for segment i, a placeholder for a gap); the later
  // rules of every chain follow all segments.
  std::vector<CompiledRule> rules_;
  size_t rule_count_ = 0;
  size_t dropped_ = 0;
};

inline const SegmentHead* RuleTable::segment(int collective_id, uint64_t bytes) const noexcept {
  // One unsigned compare rejects negative ids too.
  if (static_cast<unsigned>(collective_id) >= static_cast<unsigned>(nccl::kNumCollectives)) return nullptr;
  const Tree& t = trees_[static_cast<size_t>(collective_id)];
  if (t.levels == 0) return nullptr;
  const SegmentHead* heads = heads_.data() + t.first;
  // Padding keys are UINT64_MAX, so the walk below would count them for this one size; the last segment
  // always holds it.
  if (bytes == UINT64_MAX) return &heads[t.count - 1];
  // Top down: at each level, the number of keys <= bytes among those picked so far (at least 1: the first
  // segment starts at 0 and each block's first key is its parent's key) picks the child; bytes < UINT64_MAX
  // never counts a padding key. A count takes two rounds of independent compares and no branch: the keys
  // are sorted, so the quarters' last keys that are <= bytes say how many quarters are full (q), and the four
  // keys of quarter min(q, last) give the rest (a quarter before the last with q pointing at it has its last
  // key > bytes, adding nothing; q past the last counts all four). The root has 16 quarters (64 keys: 1,000
  // segments need one level below it, 10,000 two), every other block 4.
  const uint64_t* k = t.root.data();
  size_t q = 0;
  for (size_t j = 3; j < kRootKeys; j += 4) q += size_t{k[j] <= bytes};
  q = q < kRootKeys / 4 - 1 ? q : kRootKeys / 4 - 1;
  size_t pos = 4 * q + size_t{k[4 * q] <= bytes} + size_t{k[4 * q + 1] <= bytes} +
               size_t{k[4 * q + 2] <= bytes} + size_t{k[4 * q + 3] <= bytes} - 1;
  for (uint32_t l = t.levels - 1; l-- > 0;) {
    k = blocks_[t.level_at[l] + pos].key;
    const size_t b =
        size_t{k[3] <= bytes} + size_t{k[7] <= bytes} + size_t{k[11] <= bytes} + size_t{k[15] <= bytes};
    const uint64_t* quarter = k + 4 * (b < 3 ? b : 3);
    const size_t cnt = 4 * (b < 3 ? b : 3) + size_t{quarter[0] <= bytes} + size_t{quarter[1] <= bytes} +
                       size_t{quarter[2] <= bytes} + size_t{quarter[3] <= bytes};
    pos = pos * kFanout + cnt - 1;
  }
  // Segments tile the sizes, so the one starting at the last key <= bytes holds them.
  return &heads[pos];
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
