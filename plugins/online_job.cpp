#include "plugins/online_job.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <mutex>
#include <thread>

#include "common/atomic_file.hpp"
#include "common/host_name.hpp"
#include "common/job_rank.hpp"
#include "plugins/profile_cache.hpp"
#include "plugins/profiler_events.hpp"
#include "plugins/telemetry_table.hpp"
#include "plugins/tuner_core.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/telemetry_file.hpp"

namespace autotune::plugin::online {
namespace {

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// The first of these the launcher or the scheduler set, else this process's id (one file per process).
std::string job_id() {
  for (const char* name : {kJobEnv, "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID"})
    if (const char* v = env_value(name)) return v;
  return "pid" + std::to_string(::getppid());
}

std::string rank_id() {
  if (const auto rank = job_rank()) return "rank" + *rank;
  return "pid" + std::to_string(::getpid());
}

// <store>/telemetry: NCCL_AUTOTUNE_STORE, else the store the profile lies in (a job pinned by the launcher
// reads <store>/versions/<name>-<digest>.toml).
std::filesystem::path telemetry_dir(const std::string& profile_path) {
  if (const char* store = env_value(kStoreEnv)) return std::filesystem::path(store) / "telemetry";
  std::filesystem::path dir = std::filesystem::path(profile_path).parent_path();
  if (dir.filename() == "versions") dir = dir.parent_path();
  return dir / "telemetry";
}

int interval_seconds(ncclDebugLogger_t log) {
  const char* v = env_value(kIntervalEnv);
  if (v == nullptr) return 300;
  char* end = nullptr;
  const long s = std::strtol(v, &end, 10);
  if (end != nullptr && *end == '\0' && s >= 1 && s <= 86400) return static_cast<int>(s);
  if (log)
    log(NCCL_LOG_WARN, NCCL_TUNING, "autotune", 0,
        "TUNER/Autotune: %s=\"%s\" not used: expected seconds 1..86400; writing every 300 s", kIntervalEnv,
        v);
  return 300;
}

class Writer {
 public:
  static Writer& instance() {
    static Writer w;
    return w;
  }
  ~Writer() { stop(); }

  void start(const LoadedProfile& p, const std::string& path, ncclDebugLogger_t log) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++comms_;
    if (started_) return;
    started_ = true;
    log_ = log;
    head_.digest = profiles::digest_text(p.digest);
    head_.cluster = p.profile.cluster.name;
    head_.nccl_version = p.profile.provenance.nccl_version;
    head_.job = job_id();
    head_.rank = rank_id();
    head_.host = host_name();
    file_ = telemetry_dir(path) / profiles::telemetry_file_name(head_.digest, head_.job, head_.rank);
    interval_ = std::chrono::seconds(interval_seconds(log));
    thread_ = std::thread([this] { loop(); });
  }

  void finalize() {
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = started_ && comms_ > 0 && --comms_ == 0;
    }
    if (last) flush();
  }

  bool flush() {
    profiles::Telemetry t;
    std::filesystem::path file;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!started_) return false;
      t = head_;
      file = file_;
    }
    for (const telemetry::Aggregate& a : telemetry::Table::process().snapshot()) t.rows.push_back(row(a));
    t.written = static_cast<int64_t>(std::time(nullptr));
    t.dropped = telemetry::Table::process().dropped() + profiler::dropped();
    std::lock_guard<std::mutex> write_lock(write_mutex_);
    try {
      // The telemetry folder only: a store that is not there is not ours to create (and a flush at exit
      // must not recreate a directory someone removed).
      std::error_code ec;
      std::filesystem::create_directory(file.parent_path(), ec);
      write_file_atomically(file, profiles::format_telemetry(t));
      return true;
    } catch (const std::exception& e) {
      warn_once(e.what());
      return false;
    }
  }

  std::filesystem::path file() {
    std::lock_guard<std::mutex> lock(mutex_);
    return file_;
  }

 private:
  static profiles::TelemetryRow row(const telemetry::Aggregate& a) {
    profiles::TelemetryRow r;
    r.nodes = a.key.nodes;
    r.ranks = a.key.ranks;
    r.ranks_per_node = a.key.nodes > 0 && a.key.ranks % a.key.nodes == 0 ? a.key.ranks / a.key.nodes : 0;
    r.collective = static_cast<nccl::Collective>(a.key.collective);
    r.bytes_log2 = a.key.bytes_log2;
    r.algorithm = static_cast<nccl::Algorithm>(a.key.algorithm);
    r.protocol = static_cast<nccl::Protocol>(a.key.protocol);
    r.channels = a.key.channels;
    r.count = a.count;
    r.mean_bytes = a.mean_bytes;
    r.mean_us = a.mean_us, r.p25_us = a.p25_us, r.p50_us = a.p50_us, r.p75_us = a.p75_us;
    r.p90_us = a.p90_us, r.p99_us = a.p99_us;
    r.min_us = a.min_us, r.max_us = a.max_us;
    return r;
  }

  void warn_once(const char* what) {
    if (warned_.exchange(true) || log_ == nullptr) return;
    log_(NCCL_LOG_WARN, NCCL_TUNING, "autotune", 0,
         "TUNER/Autotune: telemetry not written (the job goes on; said once): %s", what);
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) break;
      lock.unlock();
      flush();
      lock.lock();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!started_ || stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    flush();
  }

  std::mutex mutex_, write_mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  bool started_ = false, stopping_ = false;
  int comms_ = 0;
  std::atomic<bool> warned_{false};
  ncclDebugLogger_t log_ = nullptr;
  profiles::Telemetry head_;
  std::filesystem::path file_;
  std::chrono::seconds interval_{300};
};

}  // namespace

int on_profiler_init(ncclDebugLogger_t log) noexcept {
  try {
    const char* path = job_profile_path(nullptr);
    ProfileCache* cache = ProfileCache::instance();
    if (path == nullptr || cache == nullptr) return 0;
    std::shared_ptr<const LoadedProfile> p = cache->peek(path);
    if (!p || !p->profile.online || !p->profile.online->telemetry) return 0;
    if (profile_refusal(*p, log)) return 0;  // the tuner half says why; this job is not the profile's
    Writer::instance().start(*p, path, log);
    return profiler::kActivationMask;
  } catch (...) {
    return 0;
  }
}

void on_profiler_finalize() noexcept {
  try {
    Writer::instance().finalize();
  } catch (...) {
  }
}

std::filesystem::path telemetry_file() noexcept {
  try {
    return Writer::instance().file();
  } catch (...) {
    return {};
  }
}

}  // namespace autotune::plugin::online
