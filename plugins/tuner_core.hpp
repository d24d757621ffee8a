#pragma once
// The one tuner core behind every ABI version's adapter (adapters.cpp). A Communicator is what NCCL keeps as
// the plugin context: created at communicator init from the profile the environment names, holding its rules
// compiled for that communicator's shape (shared with every communicator of that shape, shape_rules.hpp),
// immutable afterwards. steer(), steer_v2() and chunk_size() run per collective: no allocation, no lock, no
// logging, noexcept; any number of threads may call them at once on one or many communicators. Forcing
// through the sweep hook (sweep_state.hpp) wins over the profile's rules.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "nccl/tuner_abi.h"
#include "plugins/exploration.hpp"
#include "plugins/profile_cache.hpp"
#include "plugins/sweep_state.hpp"
#include "profiles/rule_table.hpp"

namespace autotune::plugin {

// The environment variables init reads, first found wins.
inline constexpr const char* kProfileEnv = "NCCL_AUTOTUNE_PROFILE";
inline constexpr const char* kNcclConfigEnv = "NCCL_TUNER_CONFIG_FILE";
inline constexpr const char* kPluginName = "autotune";
// What the launcher pins a job to (the profile's digest), and the user's leave to apply a profile under
// another NCCL major.minor than it was made for.
inline constexpr const char* kDigestEnv = "NCCL_AUTOTUNE_PROFILE_DIGEST";
inline constexpr const char* kOtherNcclEnv = "NCCL_AUTOTUNE_OTHER_NCCL";

// The profile the job names (NCCL_AUTOTUNE_PROFILE, else NCCL_TUNER_CONFIG_FILE), null when neither is set;
// *source_var gets the variable's name.
const char* job_profile_path(const char** source_var) noexcept;
// Why the profile must not steer this job, when it must not (a digest pin it does not match, another NCCL
// major.minor), as one sentence naming both sides.
std::optional<std::string> profile_refusal(const LoadedProfile& loaded, ncclDebugLogger_t log);

// The table of a communicator without a profile: finds nothing.
extern const profiles::RuleTable kNoRules;

struct CommInit {
  size_t ranks = 0;
  size_t nodes = 0;
  // The fewest and most ranks any node holds (v5+: NCCL's NVLink domains); 0 when NCCL does not say.
  int min_ranks_per_node = 0;
  int max_ranks_per_node = 0;
  ncclDebugLogger_t log = nullptr;  // may be NULL: then nothing is logged
  // NCCL's tuning constants, pre-filled with its defaults: an ncclTunerConstants_v5_t (v5, v6) or
  // ncclTunerConstants_v7_t (v7); NULL for v2-v4 and when NCCL passes none.
  void* constants = nullptr;
  int abi_version = 5;
  // NCCL's commHash (v5+ init): the same on every rank of the communicator; exploration needs it.
  uint64_t comm_id = 0;
  bool has_comm_id = false;
};

class Communicator {
 public:
  // Reads (or reuses) the profile and logs one INFO line, or one WARN line when the profile cannot be used
  // (then no rule applies and NCCL decides); one more INFO line lists the constants it overrode, and the
  // communicator that first reads a CSV file WARNs once per line it skips. Throws only std::bad_alloc and
  // the like: adapters catch.
  explicit Communicator(const CommInit& init);

  // v3-v7: `table` is NCCL's contiguous float[numAlgo][numProto] cost table. The first rule of the chain for
  // (collective, bytes) whose conditions hold for (pipe_ops, reg_buff) and whose entry NCCL left usable wins:
  // that entry is set to 0.0 and *n_channels to the rule's channels when it names them. A rule whose entry
  // NCCL ruled out (negative) passes to the next one, as NCCL's example plugin does; with none left, the
  // table and *n_channels stay exactly as they came. reg_buff is profiles::kRegBuffUnknown under v3. Defined
  // below, in the header, so the adapters inline it (and RuleTable::find) into getCollInfo.
  inline void steer(int collective, size_t bytes, int pipe_ops, int reg_buff, float* table, int num_algo,
                    int num_proto, int* n_channels) const noexcept;

  // v2: no cost table. Sets *algorithm/*protocol only where NCCL reported support for the rule's algorithm
  // (CollNet needs collnet_support == 1, NVLS/NVLSTree nvls_support == 1; PAT is newer than v2).
  void steer_v2(int collective, size_t bytes, int pipe_ops, int collnet_support, int nvls_support,
                int* algorithm, int* protocol, int* n_channels) const noexcept;

  // v6/v7 getChunkSize: *chunk becomes the rule's chunk_bytes when the rule for (collective, bytes) names one
  // and NCCL runs that rule's algorithm and protocol; otherwise *chunk stays NCCL's.
  void chunk_size(int collective, size_t bytes, int algorithm, int protocol, size_t* chunk) const noexcept;

  // Null unless the profile's [online] explore is above 0 (and NCCL gave a communicator id).
  const explore::Plan* exploration() const noexcept { return explore_.get(); }

 private:
  inline void steer_exploring(int collective, size_t bytes, int pipe_ops, int reg_buff, float* table,
                              int num_algo, int* n_channels) const noexcept;
  void steer_forced(int collective, size_t bytes, int pipe_ops, int reg_buff, float* table, int num_algo,
                    int* n_channels) const noexcept;
  void apply_constants(const CommInit& init, std::string* note) const;
  void compile_rules(const CommInit& init, const char* path);
  void warn_skipped_lines(const char* path) const;

  ncclDebugLogger_t log_;
  std::shared_ptr<const LoadedProfile> profile_;   // keeps the rules' source alive for this communicator
  std::shared_ptr<const ShapeRules> shape_rules_;  // shared with every communicator of this shape
  const profiles::RuleTable* table_ = &kNoRules;   // shape_rules_'s table, one load from the context
  std::unique_ptr<explore::Plan> explore_;         // its counters change per call; the plan itself does not
};

// Entry (algorithm, protocol) made to win, when NCCL left it usable; false (nothing changed) otherwise.
inline bool apply_choice(int algorithm, int protocol, int channels, float (*t)[NCCL_NUM_PROTOCOLS],
                         int num_algo, int* n_channels) noexcept {
  if (algorithm < 0 || algorithm >= num_algo || protocol < 0 || protocol >= NCCL_NUM_PROTOCOLS) return false;
  float& cell = t[algorithm][protocol];
  if (!(cell >= 0.0f)) return false;  // unusable here (also catches NaN): never revive it
  cell = 0.0f;
  // No branch on the rule's channels: in a profile that mixes rules naming them with rules leaving them to
  // NCCL, a branch is mispredicted on the calls that alternate (bench_plugin: 3 to 4 ns a call). The store
  // goes to *n_channels or, unseen, to a local.
  int unused = 0;
  *(channels > 0 ? n_channels : &unused) = channels;
  return true;
}

// The rule's entry made to win, when NCCL left it usable; false (nothing changed) otherwise.
inline bool apply_rule(const profiles::CompiledRule& r, float (*t)[NCCL_NUM_PROTOCOLS], int num_algo,
                       int* n_channels) noexcept {
  return apply_choice(r.algorithm, r.protocol, r.channels, t, num_algo, n_channels);
}

// What steer() does with the rules alone (no sweep, no exploration). A segment whose chain is one rule
// without per-call conditions, the usual case, is decided from its 8-byte head: the rule's entry wins if
// usable, and there is no next rule to fall to. Any other chain is walked rule by rule.
inline void steer_by_rules(const profiles::RuleTable& rules, int collective, size_t bytes, int pipe_ops,
                           int reg_buff, float (*t)[NCCL_NUM_PROTOCOLS], int num_algo,
                           int* n_channels) noexcept {
  const profiles::SegmentHead* h = rules.segment(collective, bytes);
  if (h == nullptr) return;
  if (h->kind == profiles::SegmentHead::one) {
    apply_choice(h->algorithm, h->protocol, h->channels, t, num_algo, n_channels);
    return;
  }
  for (const profiles::CompiledRule* r = rules.chain(h); r != nullptr; r = rules.next(r))
    if (r->matches(pipe_ops, reg_buff) && apply_rule(*r, t, num_algo, n_channels)) return;
}

inline void Communicator::steer(int collective, size_t bytes, int pipe_ops, int reg_buff, float* table,
                                int num_algo, int num_proto, int* n_channels) const noexcept {
  // Our index arithmetic assumes NCCL's row length; a table of another shape is left to NCCL.
  if (table == nullptr || n_channels == nullptr || num_algo <= 0 || num_proto != NCCL_NUM_PROTOCOLS) return;
  float(*t)[NCCL_NUM_PROTOCOLS] = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(table);
  if (sweep::armed()) {
    steer_forced(collective, bytes, pipe_ops, reg_buff, table, num_algo, n_channels);
    return;
  }
  if (explore_) {
    steer_exploring(collective, bytes, pipe_ops, reg_buff, table, num_algo, n_channels);
    return;
  }
  steer_by_rules(*table_, collective, bytes, pipe_ops, reg_buff, t, num_algo, n_channels);
}

// The rule as steer() finds it, or on the calls the exploration plan picks, its runner-up (exploration.hpp).
inline void Communicator::steer_exploring(int collective, size_t bytes, int pipe_ops, int reg_buff,
                                          float* table, int num_algo, int* n_channels) const noexcept {
  float(*t)[NCCL_NUM_PROTOCOLS] = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(table);
  const profiles::CompiledRule* rule = nullptr;
  for (const profiles::CompiledRule* r = table_->find(collective, bytes); r != nullptr; r = table_->next(r))
    if (r->matches(pipe_ops, reg_buff) && r->algorithm >= 0 && r->algorithm < num_algo &&
        t[r->algorithm][r->protocol] >= 0.0f) {
      rule = r;
      break;
    }
  const uint32_t source = rule ? rule->source : UINT32_MAX;
  if (explore_->take(source, collective, bytes)) {
    const explore::Target& x = explore_->target(source);
    if (apply_choice(x.algorithm, x.protocol, x.channels, t, num_algo, n_channels)) return;
    explore_->refund(source);  // NCCL ruled the runner-up out here, alike on every rank
  }
  if (rule) apply_rule(*rule, t, num_algo, n_channels);
}

}  // namespace autotune::plugin
