#include "plugins/tuner_core.hpp"

#include <algorithm>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nccl/chunk_size.hpp"
#include "plugins/loading_nccl.hpp"
#include "plugins/sweep_state.hpp"
#include "profiles/compiled_rules.hpp"

namespace autotune::plugin {
namespace {

using profiles::CompiledRule;

// Formats first, so NCCL's logger gets one "%s" argument whatever the message contains.
__attribute__((format(printf, 3, 4))) void log_line(ncclDebugLogger_t log, ncclDebugLogLevel level,
                                                    const char* fmt, ...) {
  if (log == nullptr) return;
  char buf[4096];
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

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The communicator as the plugin can know it: nodes and ranks, and per node the fewest and most ranks (the
// NVLink domains NCCL's v5+ init reports; older ABIs say nothing, and an even spread is assumed where the
// ranks divide by the nodes).
profiles::CommShape comm_shape(const CommInit& init) {
  const int nodes = to_int(init.nodes), ranks = to_int(init.ranks);
  if (init.min_ranks_per_node > 0 && init.max_ranks_per_node >= init.min_ranks_per_node)
    return {nodes, ranks, init.min_ranks_per_node, init.max_ranks_per_node};
  return profiles::CommShape::of(nodes, ranks);
}

}  // namespace

// Why the profile must not steer this job, when it must not: the digest the launcher pinned the job to
// (NCCL_AUTOTUNE_PROFILE_DIGEST) is not the file's, or the NCCL that loaded the plugin is another major.minor
// than the profile was made for (unless the profile or NCCL_AUTOTUNE_OTHER_NCCL=apply allows it). Said with
// both sides, so that ranks that diverge show in one grep.
std::optional<std::string> profile_refusal(const LoadedProfile& loaded, ncclDebugLogger_t log) {
  const std::string found = profiles::digest_text(loaded.digest);
  if (const char* pinned = env_value(kDigestEnv); pinned != nullptr && found != pinned)
    return std::string("the job was pinned to digest ") + pinned + " (" + kDigestEnv + "), the file's is " +
           found;
  const auto made_for = nccl::Version::parse(loaded.profile.provenance.nccl_version);
  const auto running = loading_nccl_version(log);
  if (!made_for || !running || made_for->same_major_minor(*running)) return std::nullopt;
  const char* allow = env_value(kOtherNcclEnv);
  if (loaded.profile.apply_under_other_nccl || (allow != nullptr && std::string(allow) == "apply"))
    return std::nullopt;
  return "made for NCCL " + made_for->text() + ", this job runs NCCL " + running->text() + " (digest " +
         found + "; [policy] other_nccl = \"apply\" or " + kOtherNcclEnv + "=apply allows it)";
}

const char* job_profile_path(const char** source_var) noexcept {
  if (const char* path = env_value(kProfileEnv)) {
    if (source_var) *source_var = kProfileEnv;
    return path;
  }
  if (source_var) *source_var = kNcclConfigEnv;
  return env_value(kNcclConfigEnv);
}

const profiles::RuleTable kNoRules;

Communicator::Communicator(const CommInit& init) : log_(init.log) {
  const char* source_var = kProfileEnv;
  const char* path = job_profile_path(&source_var);
  if (path == nullptr) {
    log_line(log_, NCCL_LOG_INFO, "TUNER/Autotune: no profile (%s and %s unset): NCCL decides", kProfileEnv,
             kNcclConfigEnv);
    return;
  }
  ProfileCache* cache = ProfileCache::instance();
  if (cache == nullptr) {
    log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: the plugin is being unloaded, NCCL decides");
    return;
  }
  LoadResult loaded = cache->load(path);
  if (!loaded.changed.empty()) log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: %s", loaded.changed.c_str());
  const char* pinned = env_value(kDigestEnv);
  if (!loaded.profile) {
    log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: profile %s (from %s%s%s) not used, NCCL decides: %s", path,
             source_var, pinned ? ", pinned to digest " : "", pinned ? pinned : "", loaded.problem.c_str());
    return;
  }
  if (auto why = profile_refusal(*loaded.profile, log_)) {
    log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: profile %s (from %s) not used, NCCL decides: %s", path,
             source_var, why->c_str());
    return;
  }
  profile_ = loaded.profile;
  if (loaded.first_load) warn_skipped_lines(path);
  compile_rules(init, path);
}

void Communicator::compile_rules(const CommInit& init, const char* path) {
  const profiles::Profile& p = profile_->profile;
  const profiles::CommShape shape = comm_shape(init);
  bool reused = false;
  shape_rules_ = profile_->shapes.get(p, shape, &reused);
  table_ = &shape_rules_->table;
  const std::vector<profiles::Rule>& rules = shape_rules_->rules(p);
  const std::vector<size_t>& chunk_lines = shape_rules_->chunk_lines;

  std::string constants_note;
  apply_constants(init, &constants_note);
  if (p.online && p.online->explore > 0.0) {
    if (init.has_comm_id) {
      explore_ = std::make_unique<explore::Plan>(rules, init.comm_id, p.online->explore);
      constants_note += "; exploring " + std::to_string(explore_->ranges()) + " close ranges on at most " +
                        number_text(p.online->explore) + " of calls";
    } else {
      constants_note += "; no exploration (tuner ABI v" + std::to_string(init.abi_version) +
                        " gives no communicator id every rank shares)";
    }
  }

  // Said so that a slow init (the compile) shows which communicator paid for it.
  if (reused) constants_note += "; rules compiled by an earlier communicator of this shape";
  log_line(log_, NCCL_LOG_INFO,
           "TUNER/Autotune: profile %s (%s, source %s, digest %s): %zu of %zu rules apply to %s%s%s", path,
           profile_->format.c_str(), std::string(profiles::name(p.provenance.source)).c_str(),
           profiles::digest_text(profile_->digest).c_str(), table_->size(), p.rules.size(),
           shape_text(shape).c_str(), shape_rules_->scale_note.c_str(), constants_note.c_str());
  if (!chunk_lines.empty())
    log_line(log_, NCCL_LOG_WARN,
             "TUNER/Autotune: %zu rules keep NCCL's chunk size (the first is rule[%zu]): their chunk_bytes "
             "is above what this job's NCCL_BUFFSIZE / NCCL_LL_BUFFSIZE / NCCL_LL128_BUFFSIZE allow",
             chunk_lines.size(), chunk_lines.front() + 1);
}

void Communicator::warn_skipped_lines(const char* path) const {
  constexpr size_t kMaxLines = 20;  // a file of garbage must not flood the job's log
  const auto& skipped = profile_->skipped;
  for (size_t i = 0; i < skipped.size() && i < kMaxLines; ++i)
    log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: %s:%d: line skipped, the others apply: %s", path,
             skipped[i].line, skipped[i].message.c_str());
  if (skipped.size() > kMaxLines)
    log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: %s: %zu more lines skipped", path,
             skipped.size() - kMaxLines);
}

void Communicator::apply_constants(const CommInit& init, std::string* note) const {
  const profiles::Profile& p = profile_->profile;
  if (p.constants.empty()) return;
  if (init.constants == nullptr) {
    log_line(
        log_, NCCL_LOG_INFO,
        "TUNER/Autotune: %zu [constants] overrides ignored: tuner ABI v%d has no constants (v5 and later)%s",
        p.constants.size(), init.abi_version, init.abi_version >= 5 ? ", or NCCL passed none" : "");
    return;
  }
  if (!profile_->constants_problem.empty()) {
    log_line(log_, NCCL_LOG_WARN, "TUNER/Autotune: [constants] not applied: %s",
             profile_->constants_problem.c_str());
    return;
  }
  const bool v7 = init.abi_version >= 7;
  std::string applied, skipped;
  size_t count = 0;
  for (const ConstantPatch& c : profile_->constants) {
    const std::optional<size_t> offset = v7 ? std::optional<size_t>(c.offset_v7) : c.offset_v5;
    if (!offset) {
      skipped += (skipped.empty() ? "" : ", ") + c.name;
      continue;
    }
    double& slot = *reinterpret_cast<double*>(static_cast<char*>(init.constants) + *offset);
    applied +=
        (applied.empty() ? "" : ", ") + c.name + " " + number_text(slot) + " -> " + number_text(c.value);
    slot = c.value;
    ++count;
  }
  *note = "; " + std::to_string(count) + " constants overridden";
  log_line(log_, NCCL_LOG_INFO, "TUNER/Autotune: constants applied (tuner ABI v%d): %s%s%s", init.abi_version,
           applied.empty() ? "none" : applied.c_str(),
           skipped.empty() ? "" : "; not applied (no Rubin row before ABI v7): ", skipped.c_str());
}

void Communicator::steer_forced(int collective, size_t bytes, int pipe_ops, int reg_buff, float* table,
                                int num_algo, int* n_channels) const noexcept {
  float(*t)[NCCL_NUM_PROTOCOLS] = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(table);
  const sweep::Forced f = sweep::forced();
  if (!f.active) {
    // Nothing forced: the profile decides as usual, and the hook reports what NCCL will take.
    for (const CompiledRule* r = table_->find(collective, bytes); r != nullptr; r = table_->next(r))
      if (r->matches(pipe_ops, reg_buff) && apply_rule(*r, t, num_algo, n_channels)) break;
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

void Communicator::steer_v2(int collective, size_t bytes, int pipe_ops, int collnet_support, int nvls_support,
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
  } else {
    // As under a cost table: a rule whose algorithm NCCL reports unsupported passes to the next.
    for (const CompiledRule* r = table_->find(collective, bytes); r != nullptr; r = table_->next(r)) {
      if (!r->matches(pipe_ops, profiles::kRegBuffUnknown)) continue;
      if (r->protocol < 0 || r->protocol >= NCCL_NUM_PROTOCOLS ||
          !v2_allows(r->algorithm, collnet_support, nvls_support))
        continue;
      want_algo = r->algorithm;
      want_proto = r->protocol;
      want_channels = r->channels;
      break;
    }
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

void Communicator::chunk_size(int collective, size_t bytes, int algorithm, int protocol,
                              size_t* chunk) const noexcept {
  if (chunk == nullptr) return;
  if (sweep::armed() && sweep::forced().active) return;  // a forced candidate runs with NCCL's chunk
  // Chunk sizes sit on rules without per-call conditions (the profile reader insists), which getChunkSize,
  // told neither numPipeOps nor regBuff, can find; the rule must also be the one NCCL runs.
  for (const CompiledRule* r = table_->find(collective, bytes); r != nullptr; r = table_->next(r)) {
    if (!r->any_call || r->algorithm != algorithm || r->protocol != protocol) continue;
    if (r->chunk_bytes != 0) *chunk = static_cast<size_t>(r->chunk_bytes);
    return;
  }
}

}  // namespace autotune::plugin
