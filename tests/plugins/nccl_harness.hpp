#pragma once
// Calls the built libnccl-tuner-autotune.so exactly as NCCL does: dlopen(RTLD_NOW | RTLD_LOCAL), the symbol
// lookup in NCCL's order (v7, v6, v5, v4, v3, v2), init with a logger (here one that records every line),
// getCollInfo with one contiguous float[7][3] cost table passed as float**, pre-filled like NCCL (entries
// NCCL supports hold a positive time, the others -1), and finalize/destroy. The path of the library comes
// from the compile definition AUTOTUNE_PLUGIN_PATH. Thread-safe: the recorder takes a lock.

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nccl/sweep_hook.h"
#include "nccl/tuner_abi.h"

// The plugin asks the NCCL that loaded it for its version, found through the logger it was given: here the
// logger lives in the test program, which answers as NCCL would (test_plugin_harness.cpp defines
// ncclGetVersion; test_plugins is built with its symbols exported). Tests set the version NCCL claims.
extern int g_harness_nccl_version;

namespace autotune::plugin::test {

struct LogLine {
  int level;
  unsigned long flags;
  std::string text;
};

// Every line the plugin logged through the harness's logger, process-wide.
class LogRecorder {
 public:
  // Never destroyed: the plugin's telemetry writer flushes from an exit handler and may still log then,
  // after this process's own statics are gone.
  static LogRecorder& instance() {
    static LogRecorder* r = new LogRecorder;
    return *r;
  }
  void add(LogLine line) {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.push_back(std::move(line));
  }
  std::vector<LogLine> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(lines_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<LogLine> lines_;
};

inline void record_log(ncclDebugLogLevel level, unsigned long flags, const char* /*file*/, int /*line*/,
                       const char* fmt, ...) {
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  LogRecorder::instance().add({static_cast<int>(level), flags, buf});
}

// The loaded library and its exported structs (all of them, so every version can be tested).
struct Plugin {
  void* handle = nullptr;
  ncclTuner_v7_t* v7 = nullptr;
  ncclTuner_v6_t* v6 = nullptr;
  ncclTuner_v5_t* v5 = nullptr;
  ncclTuner_v4_t* v4 = nullptr;
  ncclTuner_v3_t* v3 = nullptr;
  ncclTuner_v2_t* v2 = nullptr;
  int (*force)(int, int, int) = nullptr;
  int (*last)(nccl_autotune_seen_t*) = nullptr;
  int (*hook_version)() = nullptr;
  // The first version found in NCCL 2.32.6's order, as NCCL would use it.
  int first_version = 0;

  static Plugin& get() {
    static Plugin p = load(AUTOTUNE_PLUGIN_PATH);
    return p;
  }

  static Plugin load(const char* path) {
    Plugin p;
    p.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p.handle) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
    p.v7 = static_cast<ncclTuner_v7_t*>(dlsym(p.handle, "ncclTunerPlugin_v7"));
    p.v6 = static_cast<ncclTuner_v6_t*>(dlsym(p.handle, "ncclTunerPlugin_v6"));
    p.v5 = static_cast<ncclTuner_v5_t*>(dlsym(p.handle, "ncclTunerPlugin_v5"));
    p.v4 = static_cast<ncclTuner_v4_t*>(dlsym(p.handle, "ncclTunerPlugin_v4"));
    p.v3 = static_cast<ncclTuner_v3_t*>(dlsym(p.handle, "ncclTunerPlugin_v3"));
    p.v2 = static_cast<ncclTuner_v2_t*>(dlsym(p.handle, "ncclTunerPlugin_v2"));
    p.force = reinterpret_cast<int (*)(int, int, int)>(dlsym(p.handle, "nccl_autotune_force"));
    p.last = reinterpret_cast<int (*)(nccl_autotune_seen_t*)>(dlsym(p.handle, "nccl_autotune_last"));
    p.hook_version = reinterpret_cast<int (*)()>(dlsym(p.handle, "nccl_autotune_hook_version"));
    p.first_version = p.v7 ? 7 : p.v6 ? 6 : p.v5 ? 5 : p.v4 ? 4 : p.v3 ? 3 : p.v2 ? 2 : 0;
    return p;
  }
};

inline constexpr int kAlgos = NCCL_NUM_ALGORITHMS;
inline constexpr int kProtos = NCCL_NUM_PROTOCOLS;

// NCCL's cost table for one call: contiguous, as NCCL allocates it.
struct CostTable {
  float t[kAlgos][kProtos];
  float** as_nccl() { return reinterpret_cast<float**>(&t[0][0]); }
  bool operator==(const CostTable& o) const { return std::memcmp(t, o.t, sizeof t) == 0; }
};

// Pre-filled like NCCL for this collective on a node without CollNet: the combinations NCCL can run hold a
// positive time (different per cell, so NCCL's own pick is well defined), the rest -1.
inline CostTable nccl_like_table(int collective) {
  CostTable c;
  for (int a = 0; a < kAlgos; ++a)
    for (int p = 0; p < kProtos; ++p) {
      bool ok;
      switch (collective) {
        case 0:
        case 1:
          ok = a == 1;
          break;
        case 2:
        case 3:
          ok = a == 1 || a == 4 || a == 6;
          break;
        default:
          ok = a != 6 && a != 2 && a != 3;
      }
      if ((a == 4 || a == 5 || a == 6) && p != 2) ok = false;
      c.t[a][p] = ok ? 50.0f + 7.0f * a + 3.0f * p : -1.0f;
    }
  return c;
}

// What NCCL takes from the table after the plugin returns: the smallest entry >= 0, ties to the lower index.
struct Choice {
  int algorithm = -1, protocol = -1;
  bool operator==(const Choice&) const = default;
};
inline Choice nccl_choice(const CostTable& c) {
  Choice best;
  float best_time = 0;
  for (int a = 0; a < kAlgos; ++a)
    for (int p = 0; p < kProtos; ++p)
      if (c.t[a][p] >= 0 && (best.algorithm < 0 || c.t[a][p] < best_time))
        best = {a, p}, best_time = c.t[a][p];
  return best;
}

// One communicator through one ABI version.
class Comm {
 public:
  // `constants` is what NCCL passes: an ncclTunerConstants_v7_t for v7, an ncclTunerConstants_v5_t for v5 and
  // v6 (ignored below v5), or nullptr.
  // `per_node` is the fewest and most ranks of any node, as NCCL's v5+ init reports them (its NVLink
  // domains); by default an even spread.
  Comm(int version, size_t ranks, size_t nodes, void* constants = nullptr, ncclDebugLogger_t log = record_log,
       std::optional<std::pair<int, int>> per_node = std::nullopt)
      : version_(version) {
    Plugin& p = Plugin::get();
    const int even = nodes > 0 ? static_cast<int>(ranks / nodes) : 0;
    const auto [fewest, most] = per_node.value_or(std::pair<int, int>{even, even});
    ncclNvlDomainInfo_v5_t nvl{static_cast<int>(nodes), fewest, most};
    ncclResult_t rc = ncclInternalError;
    auto* v5_constants = static_cast<ncclTunerConstants_v5_t*>(constants);
    switch (version) {
      case 7:
        rc = p.v7->init(&ctx_, 0x1234, ranks, nodes, log, &nvl,
                        static_cast<ncclTunerConstants_v7_t*>(constants));
        break;
      case 6:
        rc = p.v6->init(&ctx_, 0x1234, ranks, nodes, log, &nvl, v5_constants);
        break;
      case 5:
        rc = p.v5->init(&ctx_, 0x1234, ranks, nodes, log, &nvl, v5_constants);
        break;
      case 4:
        rc = p.v4->init(ranks, nodes, log, &ctx_);
        break;
      case 3:
        rc = p.v3->init(ranks, nodes, log, &ctx_);
        break;
      case 2:
        rc = p.v2->init(ranks, nodes, log, &ctx_);
        break;
    }
    init_result_ = rc;
  }
  ~Comm() {
    Plugin& p = Plugin::get();
    switch (version_) {
      case 7:
        p.v7->finalize(ctx_);
        break;
      case 6:
        p.v6->finalize(ctx_);
        break;
      case 5:
        p.v5->finalize(ctx_);
        break;
      case 4:
        p.v4->destroy(ctx_);
        break;
      case 3:
        p.v3->destroy(ctx_);
        break;
      case 2:
        p.v2->destroy(ctx_);
        break;
    }
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  ncclResult_t init_result() const { return init_result_; }
  void* ctx() const { return ctx_; }
  int version() const { return version_; }

  // v3-v7: one getCollInfo call on `table`; *channels as NCCL passes it (0).
  ncclResult_t coll_info(int collective, size_t bytes, CostTable& table, int& channels, int reg_buff = 0,
                         int pipe_ops = 1) {
    Plugin& p = Plugin::get();
    auto coll = static_cast<ncclFunc_t>(collective);
    float** t = table.as_nccl();
    switch (version_) {
      case 7:
        return p.v7->getCollInfo(ctx_, coll, bytes, pipe_ops, t, kAlgos, kProtos, reg_buff, &channels);
      case 6:
        return p.v6->getCollInfo(ctx_, coll, bytes, pipe_ops, t, kAlgos, kProtos, reg_buff, &channels);
      case 5:
        return p.v5->getCollInfo(ctx_, coll, bytes, pipe_ops, t, kAlgos, kProtos, reg_buff, &channels);
      case 4:
        return p.v4->getCollInfo(ctx_, coll, bytes, pipe_ops, t, kAlgos, kProtos, reg_buff, &channels);
      case 3:
        return p.v3->getCollInfo(ctx_, coll, bytes, pipe_ops, t, kAlgos, kProtos, &channels);
    }
    throw std::logic_error("coll_info is for v3-v7");
  }

  // v6/v7: getChunkSize after NCCL picked (algorithm, protocol); `chunk` comes in as NCCL's own.
  ncclResult_t chunk_size(int collective, size_t bytes, int algorithm, int protocol, size_t& chunk,
                          int channels = 8) {
    Plugin& p = Plugin::get();
    auto coll = static_cast<ncclFunc_t>(collective);
    if (version_ == 7) return p.v7->getChunkSize(ctx_, coll, bytes, algorithm, protocol, channels, &chunk);
    if (version_ == 6) return p.v6->getChunkSize(ctx_, coll, bytes, algorithm, protocol, channels, &chunk);
    throw std::logic_error("chunk_size is for v6 and v7");
  }

  // v2: NCCL's algorithm/protocol come in undefined (-1).
  ncclResult_t coll_info_v2(int collective, size_t bytes, int collnet, int nvls, int& algorithm,
                            int& protocol, int& channels, int pipe_ops = 1) {
    return Plugin::get().v2->getCollInfo(ctx_, static_cast<ncclFunc_t>(collective), bytes, collnet, nvls,
                                         pipe_ops, &algorithm, &protocol, &channels);
  }

  struct Decision {
    Choice choice;
    int channels = 0;
    bool table_untouched = true;
    bool operator==(const Decision&) const = default;
  };
  // One call as NCCL makes it, on a fresh NCCL-like table; for v2, the choice is what the plugin set.
  Decision decide(int collective, size_t bytes, int pipe_ops = 1, int reg_buff = 0) {
    Decision d;
    if (version_ == 2) {
      int a = -1, p = -1, ch = 0;
      coll_info_v2(collective, bytes, 0, 1, a, p, ch, pipe_ops);
      d.choice = {a, p};
      d.channels = ch;
      d.table_untouched = a == -1;
      if (a == -1) d.choice = nccl_choice(nccl_like_table(collective));
      return d;
    }
    CostTable before = nccl_like_table(collective), table = before;
    coll_info(collective, bytes, table, d.channels, reg_buff, pipe_ops);
    d.choice = nccl_choice(table);
    d.table_untouched = table == before;
    return d;
  }

 private:
  int version_;
  void* ctx_ = nullptr;
  ncclResult_t init_result_ = ncclInternalError;
};

// NCCL's own choice on a fresh table: what a call the plugin leaves alone decides.
inline Comm::Decision untouched_decision(int collective) {
  Comm::Decision d;
  d.choice = nccl_choice(nccl_like_table(collective));
  return d;
}

// The plugin made (algorithm, protocol) win, with `channels` (0: NCCL's).
inline Comm::Decision forced(int algorithm, int protocol, int channels) {
  Comm::Decision d;
  d.choice = {algorithm, protocol};
  d.channels = channels;
  d.table_untouched = false;
  return d;
}

}  // namespace autotune::plugin::test
