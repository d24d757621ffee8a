// getCollInfo allocates nothing: every malloc-family call in this process (the plugin's own statically linked
// operator new ends in malloc too) is counted by the interposer below, around a loop of calls through every
// ABI version, with and without the sweep hook armed.
#include <malloc.h>

#include <atomic>
#include <catch2/catch.hpp>

#include "nccl/profiler_abi.h"
#include "nccl_harness.hpp"
#include "plugin_fixtures.hpp"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {
std::atomic<uint64_t> g_allocations{0};
}

extern "C" {
void* malloc(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  return memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  void* p = memalign(a, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}

using namespace autotune::plugin::test;
using autotune::test::TempDir;
using namespace autotune::nccl;

TEST_CASE("getCollInfo and getChunkSize allocate nothing, while init's allocations are seen by the counter") {
  auto p = base_profile();
  for (uint64_t i = 0; i < 1000; ++i) {
    p.rules.push_back(rule(Collective::allreduce, i * 4096, i * 4096 + 4095,
                           i % 2 ? Algorithm::ring : Algorithm::tree, Protocol::simple,
                           static_cast<int>(i % 4)));
    if (i % 2) p.rules.back().chunk_bytes = 65536;
  }
  TempDir dir;
  write_text(dir / "p.toml", profile_text(p));
  ScopedEnv env("NCCL_AUTOTUNE_PROFILE", (dir / "p.toml").string());
  Plugin::get();

  const bool armed = GENERATE(false, true);
  INFO("sweep hook armed: " << armed);
  if (armed) REQUIRE(Plugin::get().force(-1, -1, 0) == 0);

  for (int version : {2, 3, 4, 5, 6, 7}) {
    INFO("ABI v" << version);
    uint64_t before_init = g_allocations.load();
    Comm comm(version, 16, 2);
    // The counter is real: the plugin's own operator new (static libstdc++) is counted when it allocates.
    REQUIRE(g_allocations.load() > before_init);

    CostTable table = nccl_like_table(4);
    int channels = 0, algorithm = -1, protocol = -1;
    uint64_t applied = 0;
    const uint64_t before = g_allocations.load();
    for (uint64_t i = 0; i < 20000; ++i) {
      const size_t bytes = (i * 7919) % (1000 * 4096 + 4096);
      if (version == 2) {
        algorithm = protocol = -1;
        comm.coll_info_v2(4, bytes, 0, 0, algorithm, protocol, channels);
        applied += algorithm >= 0;
      } else {
        table = nccl_like_table(4);
        comm.coll_info(4, bytes, table, channels);
        applied += table.t[0][2] == 0.0f || table.t[1][2] == 0.0f;
        if (version >= 6) {
          size_t chunk = 4096;
          comm.chunk_size(4, bytes, 1, 2, chunk);
        }
      }
    }
    const uint64_t after = g_allocations.load();
    CHECK(after - before == 0);
    CHECK(applied > 19000);  // the rules really were found
  }
}

TEST_CASE("with [online], exploring getCollInfo and the profiler's events allocate nothing") {
  auto p = base_profile();
  for (uint64_t i = 0; i < 1000; ++i) {
    p.rules.push_back(
        rule(Collective::allreduce, i * 4096, i * 4096 + 4095, Algorithm::ring, Protocol::simple));
    p.rules.back().busbw_gbps = 100.0;
    p.rules.back().runner_up = autotune::profiles::Rule::RunnerUp{Algorithm::ring, Protocol::ll, 0, 99.0};
  }
  p.online = autotune::profiles::OnlineSettings{true, 0.05};
  TempDir dir;
  write_text(dir / "p.toml", profile_text(p));
  std::filesystem::create_directory(dir / "store");
  ScopedEnv env("NCCL_AUTOTUNE_PROFILE", (dir / "p.toml").string());
  ScopedEnv store("NCCL_AUTOTUNE_STORE", (dir / "store").string());
  auto* prof = static_cast<ncclProfiler_v5_t*>(dlsym(Plugin::get().handle, "ncclProfiler_v6"));
  REQUIRE(prof != nullptr);
  int mask = 0;
  void* pctx = nullptr;
  REQUIRE(prof->init(&pctx, 0x99, &mask, nullptr, 2, 16, 0, record_log) == ncclSuccess);
  REQUIRE(mask != 0);
  Comm comm(6, 16, 2);
  const uint64_t before = g_allocations.load();
  uint64_t explored = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    CostTable table = nccl_like_table(4);
    int channels = 0;
    comm.coll_info(4, (i * 7919) % (1000 * 4096), table, channels);
    explored += table.t[1][0] == 0.0f;
    ncclProfilerEventDescr_v5_t d{};
    d.type = ncclProfileColl;
    d.coll.func = "AllReduce";
    d.coll.count = 1024u << (i % 10);
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = 2;
    d.coll.algo = "RING";
    d.coll.proto = "LL";
    void* coll = nullptr;
    prof->startEvent(pctx, &coll, &d);
    prof->stopEvent(coll);
    for (int ch = 0; ch < 2; ++ch) {
      ncclProfilerEventDescr_v5_t k{};
      k.type = ncclProfileKernelCh;
      k.parentObj = coll;
      k.kernelCh.pTimer = i * 100;
      void* h = nullptr;
      prof->startEvent(pctx, &h, &k);
      ncclProfilerEventStateArgs_v5_t a{};
      a.kernelCh.pTimer = i * 100 + 50;
      prof->recordEventState(h, NCCL_PROFILER_KERNEL_CH_STOP, &a);
      prof->stopEvent(h);
    }
  }
  CHECK(g_allocations.load() - before == 0);
  CHECK(explored > 0);  // exploration really ran
  prof->finalize(pctx);
}
