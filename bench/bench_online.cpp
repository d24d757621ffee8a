// The online half's costs, each beside its baseline, in one run, with the plugin loaded as NCCL
// loads it (dlopen of the built library):
// - getCollInfo with [online] explore = 0.01 over 1,000 AllReduce rules that all have a close runner-up,
//   beside the plain lookup of the same rules without [online] (target: at most 1.5x);
// - the profiler's work per collective (a Coll event's start and stop, and per channel a KernelCh start,
//   stop state and stop, 4 channels), with telemetry on, beside the same calls when no event was activated
//   (what NCCL would not even call; the floor of a call through the struct) (target: under 200 ns);
// - memory per process: what the online half takes (the process's resident memory after the profiler ran on
//   every collective above and wrote telemetry), beside the same process before, after plain tuner use
//   with a profile without [online] (target: under 1 MiB more).
// Times are CPU time of the calling thread (the build machine is shared); the median of 7 runs (plain and
// exploring getCollInfo alternately).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "nccl/profiler_abi.h"
#include "tests/plugins/nccl_harness.hpp"
#include "tests/plugins/plugin_fixtures.hpp"

using namespace autotune;
using namespace autotune::plugin::test;
using autotune::test::TempDir;

namespace {

constexpr uint64_t kRange = 4096;
constexpr int kRules = 1000;

double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

template <typename F>
double median_ns_per_op(size_t ops, F&& run) {
  std::vector<double> v;
  for (int r = 0; r < 7; ++r) {
    const double t0 = cpu_ns();
    run();
    v.push_back((cpu_ns() - t0) / static_cast<double>(ops));
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 12, '\n');
  }
  return 0;
}

profiles::Profile rules_profile(bool online) {
  profiles::Profile p = base_profile();
  for (int i = 0; i < kRules; ++i) {
    profiles::Rule r = rule(nccl::Collective::allreduce, uint64_t(i) * kRange,
                            uint64_t(i) * kRange + kRange - 1, nccl::Algorithm::ring, nccl::Protocol::simple);
    r.busbw_gbps = 100.0;
    r.runner_up = profiles::Rule::RunnerUp{nccl::Algorithm::ring, nccl::Protocol::ll, 0, 98.0};
    p.rules.push_back(r);
  }
  if (online) p.online = profiles::OnlineSettings{true, 0.01};
  return p;
}

void* tuner_comm(const std::filesystem::path& profile) {
  ScopedEnv env("NCCL_AUTOTUNE_PROFILE", profile.string());
  void* ctx = nullptr;
  ncclNvlDomainInfo_v5_t nvl{2, 8, 8};
  Plugin::get().v6->init(&ctx, 0xc0ffee, 16, 2, nullptr, &nvl, nullptr);
  return ctx;
}

double coll_info_run(void* ctx, size_t calls) {
  static std::vector<size_t> sizes = [] {
    std::vector<size_t> v(4096);
    for (size_t i = 0; i < v.size(); ++i) v[i] = (i * 2654435761u) % (kRules * kRange);
    return v;
  }();
  const CostTable fresh = nccl_like_table(4);
  CostTable t = fresh;
  int channels = 0;
  const double t0 = cpu_ns();
  for (size_t i = 0; i < calls; ++i) {
    t = fresh;
    Plugin::get().v6->getCollInfo(ctx, ncclFuncAllReduce, sizes[i & 4095], 1, t.as_nccl(), kAlgos, kProtos, 0,
                                  &channels);
  }
  const double ns = (cpu_ns() - t0) / static_cast<double>(calls);
  if (t.t[0][0] == 12345.f) std::printf(" ");
  return ns;
}

// Plain and exploring timed alternately, 7 times each (the machine's load hits both alike); medians.
std::pair<double, double> coll_info_ns(const std::filesystem::path& plain,
                                       const std::filesystem::path& online) {
  void* a = tuner_comm(plain);
  void* b = tuner_comm(online);
  std::vector<double> pa, pb;
  for (int r = 0; r < 7; ++r) {
    pa.push_back(coll_info_run(a, 400000));
    pb.push_back(coll_info_run(b, 400000));
  }
  Plugin::get().v6->finalize(a);
  Plugin::get().v6->finalize(b);
  std::sort(pa.begin(), pa.end());
  std::sort(pb.begin(), pb.end());
  return {pa[3], pb[3]};
}

// One collective's events, as NCCL 2.29+ makes them, `kinds` different sizes in turn.
double profiler_ns(void* ctx, size_t collectives, int kinds) {
  auto* prof = static_cast<ncclProfiler_v5_t*>(dlsym(Plugin::get().handle, "ncclProfiler_v6"));
  return median_ns_per_op(collectives, [&] {
    for (size_t i = 0; i < collectives; ++i) {
      ncclProfilerEventDescr_v5_t d{};
      d.type = ncclProfileColl;
      d.coll.seqNumber = i;
      d.coll.func = "AllReduce";
      d.coll.count = 1024u << (i % static_cast<size_t>(kinds));
      d.coll.datatype = "ncclFloat32";
      d.coll.nChannels = 4;
      d.coll.algo = "RING";
      d.coll.proto = "SIMPLE";
      void* coll = nullptr;
      prof->startEvent(ctx, &coll, &d);
      prof->stopEvent(coll);
      for (int ch = 0; ch < d.coll.nChannels; ++ch) {
        ncclProfilerEventDescr_v5_t k{};
        k.type = ncclProfileKernelCh;
        k.parentObj = coll;
        k.kernelCh.channelId = static_cast<uint8_t>(ch);
        k.kernelCh.pTimer = i * 1000;
        void* h = nullptr;
        prof->startEvent(ctx, &h, &k);
        ncclProfilerEventStateArgs_v5_t a{};
        a.kernelCh.pTimer = i * 1000 + 500 + ch;
        prof->recordEventState(h, NCCL_PROFILER_KERNEL_CH_STOP, &a);
        prof->stopEvent(h);
      }
    }
  });
}

}  // namespace

int main() {
  TempDir dir;
  write_text(dir / "plain.toml", profile_text(rules_profile(false)));
  write_text(dir / "online.toml", profile_text(rules_profile(true)));
  std::filesystem::create_directory(dir / "store");
  ScopedEnv store("NCCL_AUTOTUNE_STORE", (dir / "store").string());
  const long rss_before = rss_kib();
  Plugin::get();
  const long rss_loaded = rss_kib();

  const auto [plain, exploring] = coll_info_ns(dir / "plain.toml", dir / "online.toml");

  auto* prof = static_cast<ncclProfiler_v5_t*>(dlsym(Plugin::get().handle, "ncclProfiler_v6"));
  int mask = 0;
  void* off_ctx = nullptr;
  {
    ScopedEnv env("NCCL_AUTOTUNE_PROFILE", (dir / "plain.toml").string());
    prof->init(&off_ctx, 1, &mask, nullptr, 2, 16, 0, nullptr);  // no [online]: null context, mask 0
  }
  const long rss_plain = rss_kib();
  const double off = profiler_ns(off_ctx, 200000, 1);
  void* on_ctx = nullptr;
  {
    ScopedEnv env("NCCL_AUTOTUNE_PROFILE", (dir / "online.toml").string());
    prof->init(&on_ctx, 2, &mask, nullptr, 2, 16, 0, nullptr);
  }
  const double on = profiler_ns(on_ctx, 200000, 20);  // 20 sizes: 20 table cells
  prof->finalize(on_ctx);                             // the last communicator: telemetry written
  const long rss_online = rss_kib();

  const double ratio = exploring / plain;
  std::printf("bench_online (plugin %s; CPU time of the calling thread, median of 7 runs)\n",
              AUTOTUNE_PLUGIN_PATH);
  std::printf(
      "  getCollInfo, %d rules: plain lookup %.1f ns/call; with [online] explore = 0.01 %.1f ns/call: "
      "%.2fx (target <= 1.5x: %s)\n",
      kRules, plain, exploring, ratio, ratio <= 1.5 ? "met" : "MISSED");
  std::printf(
      "  profiler per collective (Coll start/stop + 4 channels' start/state/stop, 20 sizes): %.1f ns "
      "with telemetry; the same calls with no event activated %.1f ns (target < 200 ns: %s)\n",
      on, off, on < 200.0 ? "met" : "MISSED");
  const long extra = rss_online - rss_plain;
  std::printf(
      "  memory: resident %ld KiB before the plugin, %ld KiB loaded, %ld KiB after plain use, %ld KiB "
      "after telemetry on 1,400,000 collectives: +%ld KiB for the online half (target < 1024 KiB: %s)\n",
      rss_before, rss_loaded, rss_plain, rss_online, extra, extra < 1024 ? "met" : "MISSED");
  return 0;
}
