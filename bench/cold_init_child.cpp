// One sample of a plugin's cold start, for bench_plugin: a fresh process (bench_plugin fork+execs it per
// sample) opens the plugin as NCCL does (nccl/tuner_loader), then times the first communicator's init, with a
// logger that discards, as NCCL's does when NCCL_DEBUG is unset. The profile comes from the environment the
// parent gave (NCCL_AUTOTUNE_PROFILE or NCCL_TUNER_CONFIG_FILE).
//   cold_init_child PLUGIN NCCL_VERSION_CODE
// prints "open_ns init_wall_ns init_cpu_ns" and exits 0; exits 1 when the plugin does not open or init fails.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "nccl/tuner_loader.hpp"

namespace {

long long now_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void discard(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cold_init_child PLUGIN NCCL_VERSION_CODE\n");
    return 2;
  }
  using autotune::nccl::TunerPlugin;
  const long long open_start = now_ns(CLOCK_MONOTONIC);
  auto plugin = TunerPlugin::open({std::string(argv[1]), std::atoi(argv[2]), std::nullopt}, nullptr);
  const long long open_ns = now_ns(CLOCK_MONOTONIC) - open_start;
  if (!plugin) return 1;
  ncclNvlDomainInfo_v5_t nvl{2, 8, 8};
  ncclTunerConstants_v7_t constants{};
  void* ctx = nullptr;
  const long long wall = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
  const ncclResult_t r = plugin->init(&ctx, 0x1234, 16, 2, discard, &nvl, &constants);
  const long long cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu, wall_ns = now_ns(CLOCK_MONOTONIC) - wall;
  if (r != ncclSuccess) return 1;
  std::printf("%lld %lld %lld\n", open_ns, wall_ns, cpu_ns);
  std::fflush(stdout);
  plugin->finalize(ctx);
  return 0;
}
