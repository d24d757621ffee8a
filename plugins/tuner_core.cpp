#include "plugins/tuner_core.hpp"

#include <algorithm>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "plugins/sweep_state.hpp"

namespace autotune::plugin {
namespace {

using profiles::CompiledRule;

// Formats first, so NCCL's logger gets one "%s" argument whatever the message contains.
__attribute__((format(printf, 3, 4))) void log_line(ncclDebugLogger_t log, ncclDebugLogLevel level,
                                                    const char* fmt, ...) {
  if (log == nullptr) return;
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  log(level, NCCL_TUNING, "autotune", 0, "%s", buf);
}

int to_int(size_t n) {
  return n > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n);
}

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

struct Pick {
  int algorithm = -1, protocol = -1;
};

// What NCCL itself takes from the table after we return: the smallest entry >= 0, ties to the lower index.
Pick nccl_pick(const float (*t)[NCCL_NUM_PROTOCOLS], int num_algo) noexcept {
  Pick best;
  float best_time = 0.0f;
  for (int a = 0; a < num_algo; ++a)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; ++p) {
      float v = t[a][p];
      if (v >= 0.0f && (best.algorithm < 0 || v < best_time)) best = {a, p}, best_time = v;
    }
  return best;
}

// v2 has no table: NCCL tells us only whether CollNet and NVLS exist for this call.
bool v2_allows(int algorithm, int collnet_support, int nvls_support) {
  switch (algorithm) {
    case 0:
    case 1:
      return true;
    case 2:
    case 3:
      return collnet_support == 1;
    case 4:
    case 5:
      return nvls_support == 1;
    default:
      return false;  // PAT arrived after the v2 ABI
  }
}

// NCCL's example plugin takes the first row, in file order, that matches the call; RuleTable gives bytes that
// two rules share to the lower min_bytes. For its CSV files, cut each row applying at this scale down to the
// bytes no earlier row covers, so the compiled table makes the example plugin's choice. Quadratic in the rows
// of one collective, which is fine for hand-written CSV files.
std::vector<profiles::Rule> first_match_wins(const std::vector<profiles::Rule>& rules, int nodes, int ranks) {
  std::vector<profiles::Rule> out;
  for (const profiles::Rule& r : rules) {
    if (!r.applies_to(nodes, ranks) || r.min_bytes > r.max_bytes) continue;
    std::vector<std::pair<uint64_t, uint64_t>> pieces{{r.min_bytes, r.max_bytes}};
    for (const profiles::Rule& earlier : out) {
      if (earlier.collective != r.collective) continue;
      std::vector<std::pair<uint64_t, uint64_t>> left;
      for (auto [lo, hi] : pieces) {
        if (earlier.max_bytes < lo || earlier.min_bytes > hi) {
          left.push_back({lo, hi});
          continue;
        }
        if (earlier.min_bytes > lo) left.push_back({lo, earlier.min_bytes - 1});
        if (earlier.max_bytes < hi) left.push_back({earlier.max_bytes + 1, hi});
      }
      pieces = std::move(left);
    }
    for (auto [lo, hi] : pieces) {
      profiles::Rule piece = r;
      piece.min_bytes = lo;
      piece.max_bytes = hi;
      piece.nodes.reset();
      piece.ranks.reset();
      out.push_back(piece);
    }
  }
  return out;
}

}  // namespace

Communicator::Communicator(const CommInit& init) : log_(init.log) {
  const char* source_var = kProfileEnv;
  const char* path = env_value(kProfileEnv);
  if (path == nullptr) {
    source_var = kNcclConfigEnv;
    path = env_value(kNcclConfigEnv);
  }
  if (path == nullptr) {
    log_line(log_, NCCL_LOG_INFO, "TUNER/Autotune: no profile (%s and %s unset): NCCL decides", kProfileEnv,
             kNcclConfigEnv);
    return;
  }
  LoadResult loaded = ProfileCache::instance().load(path);
  if (!loaded.profile) {
    log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: profile %s (from %s) not used, NCCL decides: %s", path,
             source_var, loaded.problem.c_str());
    return;
  }
  profile_ = loaded.profile;
  const profiles::Profile& p = profile_->profile;
  const int nodes = to_int(init.nodes), ranks = to_int(init.ranks);

  std::string scale_note;
  auto nearest = profiles::nearest_named_scale(p.rules, profiles::Scale{nodes, ranks});
  if (nearest && p.uncalibrated == profiles::UncalibratedPolicy::nearest_scale) {
    table_ = profiles::RuleTable::compile(p.rules, nearest->nodes, nearest->ranks);
    scale_note = "; scale not calibrated, policy nearest: rules of " + std::to_string(nearest->nodes) +
                 " nodes x " + std::to_string(nearest->ranks) + " ranks";
  } else {
    table_ = profile_->format == "CSV"
                 ? profiles::RuleTable::compile(first_match_wins(p.rules, nodes, ranks), nodes, ranks)
                 : profiles::RuleTable::compile(p.rules, nodes, ranks);
    if (nearest) scale_note = "; scale not calibrated, policy nccl: NCCL decides";
  }

  std::string constants_note;
  if (!p.constants.empty()) {
    if (init.constants == nullptr) {
      log_line(
          log_, NCCL_LOG_INFO,
          "TUNER/Autotune: %zu [constants] overrides ignored: tuner ABI v%d has no constants (v5 and later)",
          p.constants.size(), init.abi_version);
    } else if (!profile_->constants_problem.empty()) {
      log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: [constants] not applied: %s",
               profile_->constants_problem.c_str());
    } else {
      for (const ConstantPatch& c : profile_->constants)
        *reinterpret_cast<double*>(reinterpret_cast<char*>(init.constants) + c.offset) = c.value;
      constants_note = "; " + std::to_string(profile_->constants.size()) + " constants overridden";
    }
  }

  log_line(log_, NCCL_LOG_INFO,
           "TUNER/Autotune: profile %s (%s, source %s): %zu of %zu rules apply to %d nodes x %d ranks%s%s",
           path, profile_->format.c_str(), std::string(profiles::name(p.provenance.source)).c_str(),
           table_.size(), p.rules.size(), nodes, ranks, scale_note.c_str(), constants_note.c_str());
}

void Communicator::steer_forced(int collective, size_t bytes, float* table, int num_algo,
                                int* n_channels) const noexcept {
  float(*t)[NCCL_NUM_PROTOCOLS] = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(table);
  const sweep::Forced f = sweep::forced();
  if (!f.active) {
    // Nothing forced: the profile decides as usual, and the hook reports what NCCL will take.
    const CompiledRule* r = table_.find(collective, bytes);
    if (r != nullptr && r->algorithm >= 0 && r->algorithm < num_algo && r->protocol >= 0 &&
        r->protocol < NCCL_NUM_PROTOCOLS && t[r->algorithm][r->protocol] >= 0.0f) {
      t[r->algorithm][r->protocol] = 0.0f;
      if (r->channels > 0) *n_channels = r->channels;
    }
    Pick pick = nccl_pick(t, num_algo);
    sweep::record(collective, bytes, pick.algorithm, pick.protocol, *n_channels, false, false);
    return;
  }
  bool refused = false, applied = false;
  if (f.algorithm >= 0) {
    if (f.algorithm < num_algo && t[f.algorithm][f.protocol] >= 0.0f) {
      t[f.algorithm][f.protocol] = 0.0f;
      applied = true;
    } else {
      refused = true;
    }
  }
  if (!refused && f.channels > 0) {
    *n_channels = f.channels;
    applied = true;
  }
  Pick pick = nccl_pick(t, num_algo);
  sweep::record(collective, bytes, pick.algorithm, pick.protocol, *n_channels, applied, refused);
}

void Communicator::steer_v2(int collective, size_t bytes, int collnet_support, int nvls_support,
                            int* algorithm, int* protocol, int* n_channels) const noexcept {
  if (algorithm == nullptr || protocol == nullptr || n_channels == nullptr) return;
  int want_algo = -1, want_proto = -1, want_channels = 0;
  bool forcing = false;
  sweep::Forced f;
  if (sweep::armed()) {
    f = sweep::forced();
    forcing = f.active;
  }
  if (forcing) {
    want_algo = f.algorithm;
    want_proto = f.protocol;
    want_channels = f.channels;
  } else if (const CompiledRule* r = table_.find(collective, bytes)) {
    want_algo = r->algorithm;
    want_proto = r->protocol;
    want_channels = r->channels;
  }
  bool refused = false, applied = false;
  if (want_algo >= 0) {
    if (want_proto >= 0 && want_proto < NCCL_NUM_PROTOCOLS &&
        v2_allows(want_algo, collnet_support, nvls_support)) {
      *algorithm = want_algo;
      *protocol = want_proto;
      applied = true;
    } else {
      refused = true;
    }
  }
  if (!refused && want_channels > 0) {
    *n_channels = want_channels;
    applied = true;
  }
  if (sweep::armed())
    sweep::record(collective, bytes, *algorithm, *protocol, *n_channels, forcing && applied,
                  forcing && refused);
}

}  // namespace autotune::plugin
