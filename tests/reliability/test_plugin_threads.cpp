// The plugin under many threads while its profile file is replaced, deleted, restored and rewritten in place:
// communicators are created (every ABI version) and queried on many threads, plus one long-lived
// communicator shared by all of them. Every init and getCollInfo returns success, and every communicator
// gives profile A's answer for its whole life: the profile the process read first, whatever happened to the
// file since (a job never changes its rules under its ranks). Run under the tsan preset by
// scripts/sanitizers.sh. (tests/plugins has the plugin's own replace-only variant; this one adds deletion and
// torn files.)

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/atomic_file.hpp"
#include "kill_loop.hpp"
#include "nccl/tuner_abi.h"

namespace fs = std::filesystem;

namespace {

constexpr int kAlgos = NCCL_NUM_ALGORITHMS, kProtos = NCCL_NUM_PROTOCOLS;
constexpr int kTree = 0, kRing = 1, kSimple = 2;

const char* kHeader = R"(schema = 1
[cluster]
name = "threads"
fingerprint = "h100x8"
gpu_model = "H100"
gpus_per_node = 8
nodes = 2
nics_per_node = 8
[provenance]
created = "2026-11-30T05:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "simulated"
command = "reliability thread test"
)";

std::string profile_text(const char* algorithm, int channels) {
  return std::string(kHeader) + "[[rule]]\ncollective = \"allreduce\"\nmin_bytes = 0\nmax_bytes = \"1M\"\n" +
         "algorithm = \"" + algorithm + "\"\nprotocol = \"simple\"\nchannels = " + std::to_string(channels) +
         "\n";
}

void quiet_log(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

struct Answer {
  int algorithm = -1, protocol = -1, channels = 0;
  bool operator==(const Answer&) const = default;
};

// An AllReduce cost table as NCCL fills it (every algorithm but CollNet and PAT; NVLS only with Simple), with
// NCCL's own pick at Tree/LL.
struct Table {
  float t[kAlgos][kProtos];
  Table() {
    for (int a = 0; a < kAlgos; ++a)
      for (int p = 0; p < kProtos; ++p) {
        bool ok = a != 2 && a != 3 && a != 6 && !((a == 4 || a == 5) && p != 2);
        t[a][p] = ok ? 10.0f + a * 3 + p : -1.0f;
      }
  }
  Answer choice(int channels) const {
    Answer best;
    float time = 0;
    for (int a = 0; a < kAlgos; ++a)
      for (int p = 0; p < kProtos; ++p)
        if (t[a][p] >= 0 && (best.algorithm < 0 || t[a][p] < time)) best = {a, p, 0}, time = t[a][p];
    best.channels = channels;
    return best;
  }
};

struct Plugin {
  ncclTuner_v6_t* v6;
  ncclTuner_v5_t* v5;
  ncclTuner_v4_t* v4;
  ncclTuner_v3_t* v3;
  ncclTuner_v2_t* v2;
  static const Plugin& get() {
    static const Plugin p = [] {
      void* h = dlopen(AUTOTUNE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
      if (!h) FAIL("dlopen: " << dlerror());
      return Plugin{static_cast<ncclTuner_v6_t*>(dlsym(h, "ncclTunerPlugin_v6")),
                    static_cast<ncclTuner_v5_t*>(dlsym(h, "ncclTunerPlugin_v5")),
                    static_cast<ncclTuner_v4_t*>(dlsym(h, "ncclTunerPlugin_v4")),
                    static_cast<ncclTuner_v3_t*>(dlsym(h, "ncclTunerPlugin_v3")),
                    static_cast<ncclTuner_v2_t*>(dlsym(h, "ncclTunerPlugin_v2"))};
    }();
    return p;
  }
};

// One communicator through ABI version 2..6; counts every non-success return in `errors`.
class Comm {
 public:
  Comm(int version, std::atomic<int>& errors) : version_(version), errors_(errors) {
    const Plugin& p = Plugin::get();
    ncclNvlDomainInfo_v5_t nvl{1, 8, 8};
    ncclResult_t rc = ncclInternalError;
    switch (version) {
      case 6:
        rc = p.v6->init(&ctx_, 42, 16, 2, quiet_log, &nvl, nullptr);
        break;
      case 5:
        rc = p.v5->init(&ctx_, 42, 16, 2, quiet_log, &nvl, nullptr);
        break;
      case 4:
        rc = p.v4->init(16, 2, quiet_log, &ctx_);
        break;
      case 3:
        rc = p.v3->init(16, 2, quiet_log, &ctx_);
        break;
      default:
        rc = p.v2->init(16, 2, quiet_log, &ctx_);
        break;
    }
    if (rc != ncclSuccess) ++errors_;
  }
  ~Comm() {
    const Plugin& p = Plugin::get();
    ncclResult_t rc = version_ == 6   ? p.v6->finalize(ctx_)
                      : version_ == 5 ? p.v5->finalize(ctx_)
                      : version_ == 4 ? p.v4->destroy(ctx_)
                      : version_ == 3 ? p.v3->destroy(ctx_)
                                      : p.v2->destroy(ctx_);
    if (rc != ncclSuccess) ++errors_;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  Answer decide(size_t bytes) const {
    const Plugin& p = Plugin::get();
    Table table;
    int channels = 0;
    ncclResult_t rc = ncclSuccess;
    float** cost = reinterpret_cast<float**>(&table.t[0][0]);
    switch (version_) {
      case 6:
        rc = p.v6->getCollInfo(ctx_, ncclFuncAllReduce, bytes, 1, cost, kAlgos, kProtos, 0, &channels);
        break;
      case 5:
        rc = p.v5->getCollInfo(ctx_, ncclFuncAllReduce, bytes, 1, cost, kAlgos, kProtos, 0, &channels);
        break;
      case 4:
        rc = p.v4->getCollInfo(ctx_, ncclFuncAllReduce, bytes, 1, cost, kAlgos, kProtos, 0, &channels);
        break;
      case 3:
        rc = p.v3->getCollInfo(ctx_, ncclFuncAllReduce, bytes, 1, cost, kAlgos, kProtos, &channels);
        break;
      default: {
        int algorithm = -1, protocol = -1;
        rc = p.v2->getCollInfo(ctx_, ncclFuncAllReduce, bytes, 0, 0, 1, &algorithm, &protocol, &channels);
        if (rc != ncclSuccess) ++errors_;
        return {algorithm, protocol, channels};
      }
    }
    if (rc != ncclSuccess) ++errors_;
    return table.choice(channels);
  }
  int version() const { return version_; }

 private:
  int version_;
  std::atomic<int>& errors_;
  void* ctx_ = nullptr;
};

// NCCL's own answer for this harness's table, per ABI (v2 leaves algorithm and protocol unset).
Answer nccl_default(int version) {
  return version == 2 ? Answer{} : Table().choice(0);
}
Answer rule_answer(int algorithm, int channels) {
  return {algorithm, kSimple, channels};
}

// Writes in place, the way a careless editor would: readers can see an empty or half-written file.
void rewrite_in_place(const fs::path& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return;
  for (size_t done = 0; done < text.size();) {
    const size_t chunk = std::min<size_t>(64, text.size() - done);
    if (::write(fd, text.data() + done, chunk) < 0) break;
    done += chunk;
  }
  ::close(fd);
}

}  // namespace

TEST_CASE("plugin: many threads while the profile is replaced, deleted, restored and torn", "[reliability]") {
  autotune::test::TempDir dir("plugin-threads");
  const fs::path path = dir.path() / "profile.toml";
  const std::string a = profile_text("ring", 2), b = profile_text("tree", 3);
  autotune::write_file_atomically(path, a);
  ::setenv("NCCL_AUTOTUNE_PROFILE", path.c_str(), 1);
  ::unsetenv("NCCL_TUNER_CONFIG_FILE");
  ::unsetenv("NCCL_AUTOTUNE_INSECURE");

  std::atomic<int> errors{0}, mixed{0}, inconsistent{0}, comms{0}, calls{0};
  std::atomic<int> saw_a{0}, saw_b{0}, saw_default{0};
  std::atomic<bool> done{false};
  std::atomic<int> cycles{0};
  constexpr int kThreads = 8, kCommsPerThread = 40, kCallsPerComm = 25;
  const Comm shared(6, errors);  // created with profile A, queried by every thread throughout

  std::thread mutator([&] {
    for (int i = 0; !done.load(); ++i) {
      switch (i % 6) {
        case 0:
          autotune::write_file_atomically(path, b);
          break;
        case 1:
          fs::remove(path);
          break;
        case 2:
          autotune::write_file_atomically(path, a);
          break;  // restored
        case 3:
          rewrite_in_place(path, b);
          break;
        case 4:
          rewrite_in_place(path, a.substr(0, a.size() / 2));
          break;  // torn, then left so
        default:
          autotune::write_file_atomically(path, a);
          ++cycles;
          break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });

  // On a loaded two-core machine the readers can finish their share before the mutator is first
  // scheduled, so they keep going until the file has gone round its states twice; the deadline keeps a
  // mutator that never runs from hanging the test.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto enough = [&](int comms_done) { return comms_done >= kCommsPerThread && cycles.load() >= 2; };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; !enough(i) && std::chrono::steady_clock::now() < deadline; ++i) {
        const int version = 2 + (t + i) % 5;
        const Comm comm(version, errors);
        const Answer first = comm.decide(1000);
        if (first == rule_answer(kRing, 2))
          ++saw_a;
        else if (first == rule_answer(kTree, 3))
          ++saw_b;
        else if (first == nccl_default(version))
          ++saw_default;
        else
          ++mixed;
        for (int k = 0; k < kCallsPerComm; ++k) {
          if (!(comm.decide(1000 + k) == first)) ++inconsistent;
          if (!(shared.decide(2000 + k) == rule_answer(kRing, 2))) ++inconsistent;
          calls += 2;
        }
        ++comms;
      }
    });
  for (auto& th : threads) th.join();
  done = true;
  mutator.join();

  CHECK(errors == 0);
  CHECK(mixed == 0);
  CHECK(inconsistent == 0);
  CHECK(comms >= kThreads * kCommsPerThread);
  CHECK(cycles >= 2);
  // The file was replaced, deleted, restored and torn under the communicators: every one of them still got
  // the profile this process read first, so that ranks of one job never decide differently.
  CHECK(saw_a == comms);
  CHECK(saw_b == 0);
  CHECK(saw_default == 0);
  INFO("A " << saw_a << ", B " << saw_b << ", NCCL default " << saw_default << ", " << calls << " calls");
}
