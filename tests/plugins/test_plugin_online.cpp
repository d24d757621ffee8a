// The plugin's [online] half as NCCL drives it: the profiler structs (init, Coll and KernelCh events,
// finalize) turning a job's collectives into a telemetry file, the exploration rule deciding the same calls
// on every rank, and a profile without [online] leaving everything as it was (no events asked for, the same
// decisions). The library is dlopen'ed as NCCL opens it (nccl_harness.hpp); each case runs in its own
// process, so the plugin's process-wide state starts fresh.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "nccl/profiler_abi.h"
#include "nccl_harness.hpp"
#include "plugin_fixtures.hpp"
#include "profiles/telemetry_file.hpp"

using namespace autotune;
using namespace autotune::plugin::test;
using autotune::test::TempDir;
using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

namespace {

ncclProfiler_v5_t* profiler() {
  auto* p = static_cast<ncclProfiler_v5_t*>(dlsym(Plugin::get().handle, "ncclProfiler_v6"));
  REQUIRE(p != nullptr);
  return p;
}

profiles::Profile online_profile(bool telemetry, double explore, double runner_up_busbw = 95.0) {
  profiles::Profile p = base_profile();
  profiles::Rule r = rule(Collective::allreduce, 1 << 20, 4 << 20, Algorithm::ring, Protocol::simple);
  r.busbw_gbps = 100.0;
  r.default_busbw_gbps = 90.0;
  // Not NCCL's own pick in the harness's table (Tree/LL is): an explored call shows.
  r.runner_up = profiles::Rule::RunnerUp{Algorithm::ring, Protocol::ll, 0, runner_up_busbw};
  p.rules.push_back(r);
  p.online = profiles::OnlineSettings{telemetry, explore};
  return p;
}

// One collective as NCCL 2.29+ reports it: a Coll event started and stopped at enqueue, then one KernelCh
// event per channel from the proxy thread with the GPU's start and stop times.
void collective(ncclProfiler_v5_t* p, void* ctx, uint64_t seq, uint64_t start_ns, const uint64_t* channel_ns,
                int channels) {
  ncclProfilerEventDescr_v5_t d{};
  d.type = ncclProfileColl;
  d.coll.seqNumber = seq;
  d.coll.func = "AllReduce";
  d.coll.count = 262144;  // 1 MiB of float32
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = static_cast<uint8_t>(channels);
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  void* coll = nullptr;
  REQUIRE(p->startEvent(ctx, &coll, &d) == ncclSuccess);
  REQUIRE(p->stopEvent(coll) == ncclSuccess);
  for (int ch = 0; ch < channels; ++ch) {
    ncclProfilerEventDescr_v5_t k{};
    k.type = ncclProfileKernelCh;
    k.parentObj = coll;
    k.kernelCh.channelId = static_cast<uint8_t>(ch);
    k.kernelCh.pTimer = start_ns;
    void* h = nullptr;
    REQUIRE(p->startEvent(ctx, &h, &k) == ncclSuccess);
    ncclProfilerEventStateArgs_v5_t args{};
    args.kernelCh.pTimer = start_ns + channel_ns[ch];
    REQUIRE(p->recordEventState(h, NCCL_PROFILER_KERNEL_CH_STOP, &args) == ncclSuccess);
    REQUIRE(p->stopEvent(h) == ncclSuccess);
  }
}

std::vector<std::filesystem::path> telemetry_files(const std::filesystem::path& store) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(store / "telemetry", ec)) out.push_back(e.path());
  return out;
}

// The choice each of `calls` getCollInfo calls got on a v6 communicator with this id, at `bytes`.
std::vector<Choice> choices(uint64_t comm_id, size_t calls, uint64_t bytes) {
  Plugin& p = Plugin::get();
  void* ctx = nullptr;
  ncclNvlDomainInfo_v5_t nvl{2, 8, 8};
  REQUIRE(p.v6->init(&ctx, comm_id, 16, 2, record_log, &nvl, nullptr) == ncclSuccess);
  std::vector<Choice> out;
  for (size_t i = 0; i < calls; ++i) {
    CostTable t = nccl_like_table(4);
    int channels = 0;
    REQUIRE(p.v6->getCollInfo(ctx, ncclFuncAllReduce, bytes, 1, t.as_nccl(), kAlgos, kProtos, 0, &channels) ==
            ncclSuccess);
    out.push_back(nccl_choice(t));
  }
  p.v6->finalize(ctx);
  return out;
}

size_t count_of(const std::vector<Choice>& v, Choice c) {
  return static_cast<size_t>(std::count(v.begin(), v.end(), c));
}

const Choice kRingSimple{1, 2}, kRunnerUp{1, 0}, kNcclOwn{0, 0};

}  // namespace

TEST_CASE("online: collective events become this rank's telemetry file, written atomically at the end") {
  TempDir dir;
  write_text(dir / "p.toml", profile_text(online_profile(true, 0.0)));
  ScopedEnv profile("NCCL_AUTOTUNE_PROFILE", (dir / "p.toml").string());
  std::filesystem::create_directory(dir / "store");
  ScopedEnv store("NCCL_AUTOTUNE_STORE", (dir / "store").string());
  ScopedEnv job("NCCL_AUTOTUNE_JOB_ID", "job42");
  ncclProfiler_v5_t* p = profiler();
  CHECK(std::string(p->name) == "autotune");
  int mask = 0;
  void* ctx = nullptr;
  REQUIRE(p->init(&ctx, 0xabc, &mask, nullptr, 2, 16, 3, record_log) == ncclSuccess);
  CHECK(mask == (ncclProfileColl | ncclProfileKernelCh));
  REQUIRE(ctx != nullptr);
  const uint64_t channel_ns[4] = {10000, 11000, 13000, 12000};  // the collective's GPU time: 13 us
  for (uint64_t i = 0; i < 100; ++i) collective(p, ctx, i, 1000000 * i, channel_ns, 4);
  // Events it never asked for, and handles that are not its own, are taken without harm.
  ncclProfilerEventDescr_v5_t group{};
  group.type = ncclProfileGroup;
  void* h = reinterpret_cast<void*>(0x1);
  CHECK(p->startEvent(ctx, &h, &group) == ncclSuccess);
  CHECK(h == nullptr);
  CHECK(p->stopEvent(reinterpret_cast<void*>(0x1234)) == ncclSuccess);
  CHECK(p->stopEvent(nullptr) == ncclSuccess);
  REQUIRE(p->finalize(ctx) == ncclSuccess);

  auto files = telemetry_files(dir / "store");
  REQUIRE(files.size() == 1);
  CHECK(files[0].filename().string().find("-job42-") != std::string::npos);
  profiles::Telemetry t = profiles::parse_telemetry(read_file(files[0]), files[0].string());
  CHECK(t.cluster == "testcluster");
  REQUIRE(t.rows.size() == 1);
  const profiles::TelemetryRow& r = t.rows[0];
  CHECK(r.count == 100);
  CHECK(r.nodes == 2);
  CHECK(r.ranks == 16);
  CHECK(r.collective == Collective::allreduce);
  CHECK(r.bytes_log2 == 20);
  CHECK(r.algorithm == Algorithm::ring);
  CHECK(r.protocol == Protocol::simple);
  CHECK(r.channels == 4);
  CHECK(r.mean_us == Approx(13.0));
  CHECK(r.max_us == Approx(13.0));
  CHECK(r.p50_us == Approx(13.0).epsilon(0.2));
  CHECK(r.mean_bytes == Approx(1 << 20));
}

TEST_CASE("online: an unwritable store costs one WARN line and never an error") {
  TempDir dir;
  write_text(dir / "p.toml", profile_text(online_profile(true, 0.0)));
  write_text(dir / "not-a-dir", "a file where the store should be");
  ScopedEnv profile("NCCL_AUTOTUNE_PROFILE", (dir / "p.toml").string());
  ScopedEnv store("NCCL_AUTOTUNE_STORE", (dir / "not-a-dir").string());
  ncclProfiler_v5_t* p = profiler();
  const uint64_t channel_ns[1] = {5000};
  for (int round = 0; round < 3; ++round) {  // three jobs' worth of last communicators: three flushes
    int mask = 0;
    void* ctx = nullptr;
    REQUIRE(p->init(&ctx, 0x1, &mask, nullptr, 1, 8, 0, record_log) == ncclSuccess);
    for (uint64_t i = 0; i < 10; ++i) collective(p, ctx, i, 1000 * i, channel_ns, 1);
    REQUIRE(p->finalize(ctx) == ncclSuccess);
  }
  size_t warns = 0;
  for (const LogLine& l : LogRecorder::instance().take())
    if (l.level == NCCL_LOG_WARN && l.text.find("telemetry not written") != std::string::npos) ++warns;
  CHECK(warns == 1);
}

TEST_CASE("online: without [online] the profiler asks for no event and the decisions are unchanged") {
  TempDir dir;
  profiles::Profile plain = online_profile(false, 0.0);
  plain.online.reset();
  write_text(dir / "plain.toml", profile_text(plain));
  ScopedEnv profile("NCCL_AUTOTUNE_PROFILE", (dir / "plain.toml").string());
  int mask = 0;
  void* ctx = reinterpret_cast<void*>(0x1);
  REQUIRE(profiler()->init(&ctx, 0x77, &mask, nullptr, 2, 16, 0, record_log) == ncclSuccess);
  CHECK(mask == 0);
  CHECK(ctx == nullptr);
  REQUIRE(profiler()->finalize(ctx) == ncclSuccess);
  // Every call in the rule's range runs the rule; every other one NCCL's own choice, byte for byte.
  for (uint64_t bytes : {uint64_t{4096}, uint64_t{1} << 20, uint64_t{3} << 20, uint64_t{64} << 20}) {
    Plugin& p = Plugin::get();
    void* t_ctx = nullptr;
    ncclNvlDomainInfo_v5_t nvl{2, 8, 8};
    REQUIRE(p.v6->init(&t_ctx, 0x77, 16, 2, record_log, &nvl, nullptr) == ncclSuccess);
    CostTable t = nccl_like_table(4), before = t;
    int channels = 0;
    p.v6->getCollInfo(t_ctx, ncclFuncAllReduce, bytes, 1, t.as_nccl(), kAlgos, kProtos, 0, &channels);
    const bool in_range = bytes >= (1u << 20) && bytes <= (4u << 20);
    if (in_range) before.t[1][2] = 0.0f;
    CHECK(t == before);
    p.v6->finalize(t_ctx);
  }
}

TEST_CASE("online: exploration picks the same calls on every rank, within its fraction and its range") {
  TempDir dir;
  write_text(dir / "p.toml", profile_text(online_profile(false, 0.05)));
  ScopedEnv profile("NCCL_AUTOTUNE_PROFILE", (dir / "p.toml").string());
  const size_t calls = 4000;
  auto rank0 = choices(0xfeed, calls, 2 << 20);
  auto rank1 = choices(0xfeed, calls, 2 << 20);
  CHECK(rank0 == rank1);  // two ranks of one communicator: identical, call for call
  const size_t explored = count_of(rank0, kRunnerUp);
  CHECK(explored > 0);
  CHECK(explored <= static_cast<size_t>(0.05 * calls));
  CHECK(explored + count_of(rank0, kRingSimple) == calls);
  CHECK(choices(0xbeef, calls, 2 << 20) != rank0);  // another communicator explores other calls
  // Outside the rule's range: NCCL's own choice, every time.
  CHECK(count_of(choices(0xfeed, calls, 64 << 10), kNcclOwn) == calls);
}

TEST_CASE("online: exploration stops at its budget: the range is then decided for the job") {
  TempDir dir;
  write_text(dir / "wide.toml", profile_text(online_profile(false, 0.5)));
  ScopedEnv profile("NCCL_AUTOTUNE_PROFILE", (dir / "wide.toml").string());
  CHECK(count_of(choices(0x5, 5000, 2 << 20), kRunnerUp) == 256);
}

TEST_CASE("online: no exploration where the runner-up is not close to the rule") {
  TempDir dir;
  write_text(dir / "far.toml", profile_text(online_profile(false, 0.5, 50.0)));
  ScopedEnv profile("NCCL_AUTOTUNE_PROFILE", (dir / "far.toml").string());
  CHECK(count_of(choices(0x5, 2000, 2 << 20), kRunnerUp) == 0);
}
