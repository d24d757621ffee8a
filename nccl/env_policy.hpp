#pragma once
// What a profile's [env] may set. Profiles are untrusted input (they come from shared directories and are
// exported into every job's environment), so only NCCL tuning variables named here are accepted, each value
// is checked against that variable's own syntax, and nothing that could load code (LD_*, NCCL_NET_PLUGIN,
// NCCL_TUNER_PLUGIN) or reach a shell (metacharacters, control characters) gets through.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune::nccl {

// Whether `key` is on the allowlist.
bool is_allowed_env_key(std::string_view key);
// The allowlist, sorted, for documentation and messages.
std::vector<std::string> allowed_env_keys();

// Whether `key` is one of the process-wide settings that steer point-to-point traffic (NCCL_P2P_*_CHUNKSIZE,
// NCCL_NCHANNELS_PER_NET_PEER, NCCL_PXN_DISABLE, NCCL_P2P_PXN_LEVEL, NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL,
// NCCL_IB_QPS_PER_CONNECTION, NCCL_BUFFSIZE): a setting made of these alone is judged for [env] by what it
// does to point-to-point traffic and what it costs collectives (search/p2p_setting.hpp).
bool is_point_to_point_env_key(std::string_view key);

// Throws InputError (no file, line 0) naming the key, what was expected and what was found.
void check_env_entry(std::string_view key, std::string_view value);
// What no single entry shows: NCCL_MIN_NCHANNELS above NCCL_MAX_NCHANNELS, a point-to-point chunk size
// (NCCL_P2P_NET/NVL/PCI_CHUNKSIZE) above NCCL_BUFFSIZE / 8 (NCCL's default 4 MiB when unset), which NCCL
// would silently cut. The key to blame and the message
// ("NCCL_MIN_NCHANNELS: expected at most ..."), or nullopt when the set is consistent.
struct EnvSetProblem {
  std::string key;
  std::string message;
};
std::optional<EnvSetProblem> env_set_problem(const std::map<std::string, std::string>& env);

}  // namespace autotune::nccl
