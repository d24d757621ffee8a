#pragma once
// The one tuner core behind every ABI version's adapter (adapters.cpp). A Communicator is what NCCL keeps as
// the plugin context: created at communicator init from the profile the environment names, compiled for that
// communicator's nodes and ranks, immutable afterwards. steer() and steer_v2() run per collective: no
// allocation, no lock, no logging, noexcept; any number of threads may call them at once on one or many
// communicators. Forcing through the sweep hook (sweep_state.hpp) wins over the profile's rules.

#include <cstddef>
#include <memory>
#include <string>

#include "nccl/tuner_abi.h"
#include "plugins/profile_cache.hpp"
#include "plugins/sweep_state.hpp"
#include "profiles/rule_table.hpp"

namespace autotune::plugin {

// The environment variables init reads, first found wins.
inline constexpr const char* kProfileEnv = "NCCL_AUTOTUNE_PROFILE";
inline constexpr const char* kNcclConfigEnv = "NCCL_TUNER_CONFIG_FILE";
inline constexpr const char* kPluginName = "autotune";

struct CommInit {
  size_t ranks = 0;
  size_t nodes = 0;
  ncclDebugLogger_t log = nullptr;  // may be NULL: then nothing is logged
  // NCCL's tuning constants (v5 and later), pre-filled with its defaults; NULL for v2-v4.
  ncclTunerConstants_v5_t* constants = nullptr;
  int abi_version = 5;
};

class Communicator {
 public:
  // Reads (or reuses) the profile and logs one INFO line, or one WARN line when the profile cannot be used
  // (then no rule applies and NCCL decides). Throws only std::bad_alloc and the like: adapters catch.
  explicit Communicator(const CommInit& init);

  // v3-v6: `table` is NCCL's contiguous float[numAlgo][numProto] cost table. Makes the rule's (or the forced)
  // entry win by setting it to 0.0 and sets *n_channels when the rule names channels; leaves the table and
  // *n_channels exactly as they came when no rule matches or NCCL marked that entry unusable (negative).
  // Defined below, in the header, so the adapters inline it (and RuleTable::find) into getCollInfo.
  inline void steer(int collective, size_t bytes, float* table, int num_algo, int num_proto,
                    int* n_channels) const noexcept;

  // v2: no cost table. Sets *algorithm/*protocol only where NCCL reported support for the rule's algorithm
  // (CollNet needs collnet_support == 1, NVLS/NVLSTree nvls_support == 1; PAT is newer than v2).
  void steer_v2(int collective, size_t bytes, int collnet_support, int nvls_support, int* algorithm,
                int* protocol, int* n_channels) const noexcept;

  size_t rule_count() const noexcept { return table_.size(); }

 private:
  void steer_forced(int collective, size_t bytes, float* table, int num_algo, int* n_channels) const noexcept;

  ncclDebugLogger_t log_;
  std::shared_ptr<const LoadedProfile> profile_;  // keeps the rules' source alive for this communicator
  profiles::RuleTable table_;
};

inline void Communicator::steer(int collective, size_t bytes, float* table, int num_algo, int num_proto,
                                int* n_channels) const noexcept {
  // Our index arithmetic assumes NCCL's row length; a table of another shape is left to NCCL.
  if (table == nullptr || n_channels == nullptr || num_algo <= 0 || num_proto != NCCL_NUM_PROTOCOLS) return;
  float(*t)[NCCL_NUM_PROTOCOLS] = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(table);
  if (sweep::armed()) {
    steer_forced(collective, bytes, table, num_algo, n_channels);
    return;
  }
  const profiles::CompiledRule* r = table_.find(collective, bytes);
  if (r == nullptr || r->algorithm < 0 || r->algorithm >= num_algo || r->protocol < 0 ||
      r->protocol >= NCCL_NUM_PROTOCOLS)
    return;
  float& cell = t[r->algorithm][r->protocol];
  if (!(cell >= 0.0f)) return;  // unusable here (also catches NaN): never revive it
  cell = 0.0f;
  if (r->channels > 0) *n_channels = r->channels;
}

}  // namespace autotune::plugin
