// The plugin under a harness that calls it exactly as NCCL does (nccl_harness.hpp), through every ABI
// version.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <regex>
#include <thread>

#include "nccl_harness.hpp"
#include "plugin_fixtures.hpp"
#include "profiles/compiled_rules.hpp"

using namespace autotune::plugin::test;
using autotune::test::TempDir;
using namespace autotune::nccl;
using autotune::profiles::CountRange;

int g_harness_nccl_version = 22809;
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  if (version == nullptr) return 4;  // ncclInvalidArgument
  *version = g_harness_nccl_version;
  return 0;
}

namespace {

constexpr int kAllReduce = 4, kAllGather = 2, kReduceScatter = 3, kBroadcast = 0;
constexpr int kTree = 0, kRing = 1;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr uint64_t kMiB = 1 << 20;

std::vector<LogLine> lines_at(const std::vector<LogLine>& lines, int level) {
  std::vector<LogLine> out;
  for (const auto& l : lines)
    if (l.level == level) out.push_back(l);
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Rules at every scale, plus ReduceScatter rules for two calibrated scales.
autotune::profiles::Profile matching_profile() {
  auto p = base_profile();
  p.rules = {
      rule(Collective::allreduce, 0, 65535, Algorithm::tree, Protocol::ll, 4),
      rule(Collective::allreduce, 65536, kMiB, Algorithm::ring, Protocol::ll128),
      rule(Collective::allgather, 1024, 4096, Algorithm::pat, Protocol::simple, 2),
      rule(Collective::reducescatter, 0, 1000, Algorithm::ring, Protocol::simple, 8, CountRange{2, 2},
           CountRange{16, 16}),
      rule(Collective::reducescatter, 0, 1000, Algorithm::ring, Protocol::ll, 0, CountRange{1, 1},
           CountRange{8, 8}),
  };
  return p;
}

}  // namespace

TEST_CASE("every ABI version is exported, in NCCL's lookup order, with all entry points") {
  Plugin& p = Plugin::get();
  REQUIRE(p.first_version == 7);
  REQUIRE(p.v7);
  REQUIRE(p.v6);
  REQUIRE(p.v5);
  REQUIRE(p.v4);
  REQUIRE(p.v3);
  REQUIRE(p.v2);
  for (const char* name : {p.v7->name, p.v6->name, p.v5->name, p.v4->name, p.v3->name, p.v2->name})
    CHECK(std::string(name) == "autotune");
  CHECK((p.v7->init && p.v7->getCollInfo && p.v7->finalize && p.v7->getChunkSize));
  CHECK((p.v6->init && p.v6->getCollInfo && p.v6->finalize && p.v6->getChunkSize));
  CHECK((p.v5->init && p.v5->getCollInfo && p.v5->finalize));
  CHECK((p.v4->init && p.v4->getCollInfo && p.v4->destroy));
  CHECK((p.v3->init && p.v3->getCollInfo && p.v3->destroy));
  CHECK((p.v2->init && p.v2->getCollInfo && p.v2->destroy));
  REQUIRE(p.hook_version);
  CHECK(p.hook_version() == NCCL_AUTOTUNE_HOOK_VERSION);
}

TEST_CASE("rules steer the cost table at the edges of their byte ranges, through v3-v7") {
  ProfileFile file(profile_text(matching_profile()));
  const int version = GENERATE(3, 4, 5, 6, 7);
  INFO("ABI v" << version);
  LogRecorder::instance().take();
  Comm comm(version, 16, 2);
  REQUIRE(comm.init_result() == ncclSuccess);
  REQUIRE(comm.ctx() != nullptr);

  CHECK(comm.decide(kAllReduce, 0) == forced(kTree, kLL, 4));
  CHECK(comm.decide(kAllReduce, 65535) == forced(kTree, kLL, 4));
  CHECK(comm.decide(kAllReduce, 65536) == forced(kRing, kLL128, 0));
  CHECK(comm.decide(kAllReduce, kMiB) == forced(kRing, kLL128, 0));
  CHECK(comm.decide(kAllReduce, kMiB + 1) == untouched_decision(kAllReduce));
  CHECK(comm.decide(kAllGather, 1023) == untouched_decision(kAllGather));
  CHECK(comm.decide(kAllGather, 1024) == forced(6, kSimple, 2));
  CHECK(comm.decide(kAllGather, 4096) == forced(6, kSimple, 2));
  CHECK(comm.decide(kAllGather, 4097) == untouched_decision(kAllGather));
  CHECK(comm.decide(kBroadcast, 100) == untouched_decision(kBroadcast));
  CHECK(comm.decide(kReduceScatter, 500) == forced(kRing, kSimple, 8));
  // Ids NCCL never sends to a tuner (p2p) or garbage from a mismatched ABI: nothing changes.
  CHECK(comm.decide(7, 100) == untouched_decision(kAllReduce));
  CHECK(comm.decide(-1, 100) == untouched_decision(kAllReduce));

  SECTION("only the rule's cell changes, to 0.0") {
    CostTable before = nccl_like_table(kAllReduce), table = before;
    int channels = 0;
    REQUIRE(comm.coll_info(kAllReduce, 100, table, channels) == ncclSuccess);
    for (int a = 0; a < kAlgos; ++a)
      for (int p = 0; p < kProtos; ++p) {
        if (a == kTree && p == kLL)
          CHECK(table.t[a][p] == 0.0f);
        else
          CHECK(table.t[a][p] == before.t[a][p]);
      }
  }
  SECTION("an entry NCCL marked unusable is never revived, and nothing else changes") {
    CostTable before = nccl_like_table(kAllReduce);
    before.t[kTree][kLL] = NCCL_ALGO_PROTO_IGNORE;
    CostTable table = before;
    int channels = 0;
    REQUIRE(comm.coll_info(kAllReduce, 100, table, channels) == ncclSuccess);
    CHECK(table == before);
    CHECK(channels == 0);
  }
  SECTION("the channels NCCL passed in stay when the rule names none") {
    CostTable table = nccl_like_table(kAllReduce);
    int channels = 0;
    comm.coll_info(kAllReduce, 65536, table, channels);
    CHECK(channels == 0);
  }
}

TEST_CASE("v2 names the algorithm and protocol only where NCCL reports support") {
  auto p = base_profile();
  p.rules = {rule(Collective::allreduce, 0, 1000, Algorithm::tree, Protocol::ll, 3),
             rule(Collective::allreduce, 1001, 2000, Algorithm::collnet_direct, Protocol::simple),
             rule(Collective::allreduce, 2001, 3000, Algorithm::nvls, Protocol::simple, 5),
             rule(Collective::allgather, 0, 1000, Algorithm::pat, Protocol::simple)};
  ProfileFile file(profile_text(p));
  Comm comm(2, 16, 2);
  REQUIRE(comm.init_result() == ncclSuccess);
  int a = -1, pr = -1, ch = 0;
  REQUIRE(comm.coll_info_v2(kAllReduce, 500, 0, 0, a, pr, ch) == ncclSuccess);
  CHECK((a == kTree && pr == kLL && ch == 3));

  a = -1, pr = -1, ch = 0;
  comm.coll_info_v2(kAllReduce, 1500, /*collnet*/ 0, 1, a, pr, ch);
  CHECK((a == -1 && pr == -1 && ch == 0));
  comm.coll_info_v2(kAllReduce, 1500, /*collnet*/ 1, 1, a, pr, ch);
  CHECK((a == 2 && pr == kSimple && ch == 0));

  a = -1, pr = -1, ch = 0;
  comm.coll_info_v2(kAllReduce, 2500, 1, /*nvls*/ 0, a, pr, ch);
  CHECK((a == -1 && pr == -1 && ch == 0));
  comm.coll_info_v2(kAllReduce, 2500, 1, /*nvls*/ 1, a, pr, ch);
  CHECK((a == 4 && pr == kSimple && ch == 5));

  a = -1, pr = -1, ch = 0;
  comm.coll_info_v2(kAllGather, 100, 1, 1, a, pr, ch);  // PAT is newer than the v2 ABI
  CHECK((a == -1 && pr == -1 && ch == 0));
  comm.coll_info_v2(kAllReduce, 5000, 1, 1, a, pr, ch);
  CHECK((a == -1 && pr == -1 && ch == 0));
}

TEST_CASE("per-scale rules apply only to communicators of that scale, and the INFO line says so") {
  const int version = GENERATE(2, 4, 5, 6, 7);
  INFO("ABI v" << version);
  auto profile = matching_profile();
  SECTION("a calibrated scale gets its own rules") {
    ProfileFile file(profile_text(profile));
    LogRecorder::instance().take();
    Comm two(version, 16, 2), one(version, 8, 1);
    CHECK(two.decide(kReduceScatter, 500) == forced(kRing, kSimple, 8));
    CHECK(one.decide(kReduceScatter, 500) == forced(kRing, kLL, 0));
    CHECK(one.decide(kReduceScatter, 1001) == untouched_decision(kReduceScatter));
    auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
    REQUIRE(info.size() == 2);
    CHECK(info[0].flags == NCCL_TUNING);
    CHECK(contains(info[0].text, "profile " + file.path.string()));
    CHECK(contains(info[0].text, "source simulated"));
    CHECK(contains(info[0].text, "4 of 5 rules apply to 2x8 (16 ranks)"));
    CHECK(contains(info[1].text, "4 of 5 rules apply to 1x8 (8 ranks)"));
    CHECK_FALSE(contains(info[0].text, "not calibrated"));
  }
  SECTION("an uncalibrated scale: NCCL decides by default") {
    ProfileFile file(profile_text(profile));
    LogRecorder::instance().take();
    Comm three(version, 24, 3);
    CHECK(three.decide(kReduceScatter, 500) == untouched_decision(kReduceScatter));
    CHECK(three.decide(kAllReduce, 0) == forced(kTree, kLL, 4));  // rules for any scale still apply
    auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
    REQUIRE(info.size() == 1);
    CHECK(contains(info[0].text,
                   "3 of 5 rules apply to 3x8 (24 ranks); shape not calibrated, policy nccl: NCCL decides"));
  }
  SECTION("an uncalibrated scale under the nearest policy borrows the nearest scale's rules") {
    profile.uncalibrated = autotune::profiles::UncalibratedPolicy::nearest_scale;
    ProfileFile file(profile_text(profile));
    LogRecorder::instance().take();
    Comm three(version, 24, 3);
    CHECK(three.decide(kReduceScatter, 500) == forced(kRing, kSimple, 8));
    auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
    REQUIRE(info.size() == 1);
    CHECK(contains(info[0].text, "shape not calibrated, policy nearest: the rules of 2x8 (16 ranks)"));
  }
}

TEST_CASE("NCCL_AUTOTUNE_PROFILE wins over NCCL_TUNER_CONFIG_FILE, and neither set means NCCL decides") {
  auto tree = base_profile(), ring = base_profile();
  tree.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::tree, Protocol::simple)};
  ring.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::ring, Protocol::simple)};
  TempDir dir;
  write_text(dir / "tree.toml", profile_text(tree));
  write_text(dir / "ring.toml", profile_text(ring));
  {
    ScopedEnv config("NCCL_TUNER_CONFIG_FILE", (dir / "ring.toml").string());
    CHECK(Comm(5, 8, 1).decide(kAllReduce, 100) == forced(kRing, kSimple, 0));
    ScopedEnv ours("NCCL_AUTOTUNE_PROFILE", (dir / "tree.toml").string());
    CHECK(Comm(5, 8, 1).decide(kAllReduce, 100) == forced(kTree, kSimple, 0));
  }
  unsetenv("NCCL_AUTOTUNE_PROFILE");
  unsetenv("NCCL_TUNER_CONFIG_FILE");
  LogRecorder::instance().take();
  Comm none(5, 8, 1);
  CHECK(none.init_result() == ncclSuccess);
  CHECK(none.decide(kAllReduce, 100) == untouched_decision(kAllReduce));
  auto lines = LogRecorder::instance().take();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].level == NCCL_LOG_INFO);
  CHECK(contains(lines[0].text, "no profile"));
}

TEST_CASE("a changed profile is not picked up: the job keeps what it read and says so once") {
  // Ranks of one job must never decide differently, and a store update during a job is for the next job.
  auto a = base_profile(), b = base_profile();
  a.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::ring, Protocol::simple, 2)};
  b.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::tree, Protocol::simple, 3)};
  ProfileFile file(profile_text(a));
  Comm first(5, 8, 1);
  CHECK(first.decide(kAllReduce, 100) == forced(kRing, kSimple, 2));
  SECTION("replaced by rename") {
    replace_text(file.path, profile_text(b));
  }
  SECTION("rewritten in place") {
    // Same inode; the size differs (b has a different channel count only, so pad it).
    write_text(file.path, profile_text(b) + "\n# rewritten\n");
  }
  SECTION("deleted") {
    std::filesystem::remove(file.path);
  }
  LogRecorder::instance().take();
  Comm second(5, 8, 1), third(6, 8, 1);
  CHECK(second.decide(kAllReduce, 100) == forced(kRing, kSimple, 2));
  CHECK(third.decide(kAllReduce, 100) == forced(kRing, kSimple, 2));
  CHECK(first.decide(kAllReduce, 100) == forced(kRing, kSimple, 2));
  auto warns = lines_at(LogRecorder::instance().take(), NCCL_LOG_WARN);
  REQUIRE(warns.size() == 1);
  CHECK(contains(warns[0].text,
                 "profile " + file.path.string() + " changed on disk since this process read it"));
  CHECK(contains(warns[0].text, "this job keeps what it read"));
}

TEST_CASE("a device as the profile is refused once, and its times changing are no change of profile") {
  ScopedEnv env("NCCL_AUTOTUNE_PROFILE", "/dev/null");
  LogRecorder::instance().take();
  Comm first(5, 8, 1);
  CHECK(first.decide(kAllReduce, 100) == untouched_decision(kAllReduce));
  auto warns = lines_at(LogRecorder::instance().take(), NCCL_LOG_WARN);
  REQUIRE(warns.size() == 1);
  CHECK(contains(warns[0].text, "found a character device"));
  // Anyone writing to /dev/null moves its modification time.
  write_text("/dev/null", "x");
  Comm second(5, 8, 1);
  CHECK(second.decide(kAllReduce, 100) == untouched_decision(kAllReduce));
  for (const auto& line : LogRecorder::instance().take()) CHECK_FALSE(contains(line.text, "changed on disk"));
}

TEST_CASE("constants overrides are applied under v5-v7, listed in one INFO line, and ignored under v2-v4") {
  auto p = base_profile();
  p.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::ring, Protocol::simple)};
  autotune::profiles::ConstantOverride bw;
  bw.table = "ll_max_bw";
  bw.index = {2, 1};  // Hopper, 2 nodes
  bw.value = 33.5;
  autotune::profiles::ConstantOverride lat;
  lat.table = "hw_latency";
  lat.index = {2, 5, 2};  // network, NVLSTree, Simple
  lat.value = 24.0;
  autotune::profiles::ConstantOverride last;
  last.table = "per_ch_max_nvls_tree_bw";
  last.index = {3, 2};  // Blackwell, more nodes: the last double of the v5 struct
  last.value = 61.0;
  autotune::profiles::ConstantOverride rubin;
  rubin.table = "per_ch_max_tree_bw";
  rubin.index = {4, 0};  // Rubin, one node: only the v7 struct has it
  rubin.value = 90.0;
  p.constants = {bw, lat, last, rubin};
  ProfileFile file(profile_text(p));

  SECTION("v5 and v6 apply them to NCCL's v5 struct, all but the Rubin entry, and touch nothing else") {
    const int version = GENERATE(5, 6);
    ncclTunerConstants_v5_t constants;
    double* all = reinterpret_cast<double*>(&constants);
    for (size_t i = 0; i < sizeof constants / sizeof(double); ++i) all[i] = 1000.0 + i;
    ncclTunerConstants_v5_t expected = constants;
    expected.llMaxBws[2][1] = 33.5;
    expected.hwLatencies[2][5][2] = 24.0;
    expected.perChMaxNVLSTreeBws[3][2] = 61.0;
    LogRecorder::instance().take();
    Comm comm(version, 16, 2, &constants);
    CHECK(std::memcmp(&constants, &expected, sizeof constants) == 0);
    auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
    REQUIRE(info.size() == 2);
    CHECK(info[0].text ==
          "TUNER/Autotune: constants applied (tuner ABI v" + std::to_string(version) +
              "): hw_latency.net.nvlstree.simple 1080 -> 24, ll_max_bw.hopper.2 1091 -> 33.5, "
              "per_ch_max_nvls_tree_bw.blackwell.3 1143 -> 61; not applied (no Rubin row before "
              "ABI v7): per_ch_max_tree_bw.rubin.1");
    CHECK(contains(info[1].text, "3 constants overridden"));
  }
  SECTION("v7 applies every one to NCCL's v7 struct, Rubin row included, and touches nothing else") {
    ncclTunerConstants_v7_t constants;
    double* all = reinterpret_cast<double*>(&constants);
    for (size_t i = 0; i < sizeof constants / sizeof(double); ++i) all[i] = 1000.0 + i;
    ncclTunerConstants_v7_t expected = constants;
    expected.llMaxBws[2][1] = 33.5;
    expected.hwLatencies[2][5][2] = 24.0;
    expected.perChMaxNVLSTreeBws[3][2] = 61.0;
    expected.perChMaxTreeBws[4][0] = 90.0;
    LogRecorder::instance().take();
    Comm comm(7, 16, 2, &constants);
    CHECK(std::memcmp(&constants, &expected, sizeof constants) == 0);
    auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
    REQUIRE(info.size() == 2);
    CHECK(info[0].text ==
          "TUNER/Autotune: constants applied (tuner ABI v7): hw_latency.net.nvlstree.simple 1080 -> 24, "
          "ll_max_bw.hopper.2 1091 -> 33.5, per_ch_max_nvls_tree_bw.blackwell.3 1155 -> 61, "
          "per_ch_max_tree_bw.rubin.1 1141 -> 90");
    CHECK(contains(info[1].text, "4 constants overridden"));
  }
  SECTION("v2-v4 have no constants: one INFO line says they are ignored") {
    const int version = GENERATE(2, 3, 4);
    LogRecorder::instance().take();
    Comm comm(version, 16, 2);
    auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
    REQUIRE(info.size() == 2);
    CHECK(contains(info[0].text, "4 [constants] overrides ignored: tuner ABI v" + std::to_string(version)));
    CHECK(comm.decide(kAllReduce, 100).choice == Choice{kRing, kSimple});
  }
  SECTION("v5 and v7 with NCCL passing no constants struct is not an error") {
    const int version = GENERATE(5, 7);
    Comm comm(version, 16, 2, nullptr);
    CHECK(comm.init_result() == ncclSuccess);
    CHECK(comm.decide(kAllReduce, 100).choice == Choice{kRing, kSimple});
  }
}

TEST_CASE("v6/v7 getChunkSize: the rule's chunk where NCCL runs the rule's choice, NCCL's everywhere else") {
  auto p = base_profile();
  p.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::ring, Protocol::simple),
             rule(Collective::allreduce, kMiB + 1, 64 * kMiB, Algorithm::ring, Protocol::simple)};
  p.rules[1].chunk_bytes = 1 << 20;
  ProfileFile file(profile_text(p));
  const int version = GENERATE(6, 7);
  INFO("ABI v" << version);
  Comm comm(version, 16, 2);
  auto chunk_for = [&](int collective, size_t bytes, int algorithm, int protocol) {
    size_t chunk = 131072;  // NCCL's own, as it comes in
    REQUIRE(comm.chunk_size(collective, bytes, algorithm, protocol, chunk) == ncclSuccess);
    return chunk;
  };
  CHECK(chunk_for(kAllReduce, 2 * kMiB, kRing, kSimple) == kMiB);
  CHECK(chunk_for(kAllReduce, 64 * kMiB, kRing, kSimple) == kMiB);
  CHECK(chunk_for(kAllReduce, kMiB + 1, kRing, kSimple) == kMiB);
  CHECK(chunk_for(kAllReduce, kMiB, kRing, kSimple) == 131072);           // the rule without a chunk
  CHECK(chunk_for(kAllReduce, 64 * kMiB + 1, kRing, kSimple) == 131072);  // no rule
  CHECK(chunk_for(kAllReduce, 2 * kMiB, kTree, kSimple) == 131072);       // NCCL ran something else
  CHECK(chunk_for(kAllReduce, 2 * kMiB, kRing, kLL) == 131072);
  CHECK(chunk_for(kAllGather, 2 * kMiB, kRing, kSimple) == 131072);
  size_t chunk = 7;
  CHECK(Plugin::get().v7->getChunkSize(nullptr, ncclFuncAllReduce, 2 * kMiB, kRing, kSimple, 8, &chunk) ==
        ncclSuccess);
  CHECK(chunk == 7);
  CHECK(Plugin::get().v7->getChunkSize(comm.ctx(), ncclFuncAllReduce, 2 * kMiB, kRing, kSimple, 8, nullptr) ==
        ncclSuccess);
}

TEST_CASE("a chunk this job's NCCL_BUFFSIZE cannot hold is not given to NCCL, with one WARN line") {
  auto p = base_profile();
  p.rules = {rule(Collective::allreduce, 0, 64 * kMiB, Algorithm::ring, Protocol::simple)};
  p.rules[0].chunk_bytes = 2 << 20;  // the largest NCCL's default 4 MiB buffer holds for Ring AllReduce
  ProfileFile file(profile_text(p));
  {
    Comm comm(7, 16, 2);
    size_t chunk = 4096;
    comm.chunk_size(kAllReduce, kMiB, kRing, kSimple, chunk);
    CHECK(chunk == (2 << 20));
  }
  ScopedEnv small("NCCL_BUFFSIZE", "2097152");
  LogRecorder::instance().take();
  Comm comm(7, 16, 2);
  size_t chunk = 4096;
  comm.chunk_size(kAllReduce, kMiB, kRing, kSimple, chunk);
  CHECK(chunk == 4096);
  CHECK(comm.decide(kAllReduce, kMiB) == forced(kRing, kSimple, 0));  // the rule's choice still applies
  auto warn = lines_at(LogRecorder::instance().take(), NCCL_LOG_WARN);
  REQUIRE(warn.size() == 1);
  CHECK(contains(warn[0].text, "1 rules keep NCCL's chunk size (the first is rule[1])"));
}

TEST_CASE("numPipeOps and regBuff reach the rule match through v2-v7") {
  // As NCCL's example CSV writes them: conditions on the call, the first matching line wins.
  TempDir dir;
  write_text(dir / "conditions.conf",
             "allreduce,0,65536,tree,ll,2,-1,-1,-1,1\n"    // registered buffers only
             "allreduce,0,65536,ring,ll,3,-1,-1,4,-1\n"    // four operations aggregated
             "allreduce,0,65536,ring,simple,-1,-1,-1\n");  // everything else
  ScopedEnv env("NCCL_TUNER_CONFIG_FILE", (dir / "conditions.conf").string());
  ScopedEnv none("NCCL_AUTOTUNE_PROFILE", "");
  for (int version : {4, 5, 6, 7}) {
    INFO("ABI v" << version);
    Comm comm(version, 16, 2);
    CHECK(comm.decide(kAllReduce, 100, 1, 1) == forced(kTree, kLL, 2));
    CHECK(comm.decide(kAllReduce, 100, 4, 1) == forced(kTree, kLL, 2));  // the first match wins
    CHECK(comm.decide(kAllReduce, 100, 4, 0) == forced(kRing, kLL, 3));
    CHECK(comm.decide(kAllReduce, 100, 1, 0) == forced(kRing, kSimple, 0));
  }
  // v2 and v3 are not told regBuff: a line that needs it does not apply.
  for (int version : {2, 3}) {
    INFO("ABI v" << version);
    Comm comm(version, 16, 2);
    CHECK(comm.decide(kAllReduce, 100, 4) == forced(kRing, kLL, 3));
    CHECK(comm.decide(kAllReduce, 100, 1) == forced(kRing, kSimple, 0));
  }
}

TEST_CASE("every kind of broken profile gives one WARN line and NCCL's own choices") {
  TempDir dir;
  auto good = base_profile();
  good.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::tree, Protocol::ll)};
  const std::string good_text = profile_text(good);
  std::string newer = std::regex_replace(good_text, std::regex("schema = 1"), "schema = 99");
  REQUIRE(newer != good_text);

  struct Case {
    const char* name;
    std::string path;
  };
  std::vector<Case> cases;
  cases.push_back({"missing", (dir / "missing.toml").string()});
  cases.push_back({"a directory", dir.path().string()});
  write_text(dir / "malformed.toml", "[[rule]\ncollective = ");
  cases.push_back({"malformed TOML", (dir / "malformed.toml").string()});
  write_text(dir / "newer.toml", newer);
  cases.push_back({"newer schema", (dir / "newer.toml").string()});
  write_text(dir / "invalid.toml", std::regex_replace(good_text, std::regex("tree"), "warp"));
  cases.push_back({"unknown algorithm", (dir / "invalid.toml").string()});
  write_text(dir / "garbage.toml", std::string("\x7f"
                                               "ELF\x01\x02\0\0garbage",
                                               16));
  cases.push_back({"binary garbage", (dir / "garbage.toml").string()});
  // Neither may make init wait or read without end: refused on the descriptor, at once.
  REQUIRE(::mkfifo((dir / "fifo.toml").c_str(), 0600) == 0);
  cases.push_back({"a FIFO nobody writes", (dir / "fifo.toml").string()});
  cases.push_back({"a device without end", "/dev/zero"});
  write_text(dir / "huge.toml", good_text);
  REQUIRE(::truncate((dir / "huge.toml").c_str(), off_t{2} << 30) == 0);  // sparse
  cases.push_back({"2 GiB", (dir / "huge.toml").string()});
  if (geteuid() != 0) {
    write_text(dir / "unreadable.toml", good_text);
    chmod((dir / "unreadable.toml").c_str(), 0);
    cases.push_back({"unreadable", (dir / "unreadable.toml").string()});
  }

  for (const Case& c : cases) {
    INFO(c.name);
    ScopedEnv env("NCCL_AUTOTUNE_PROFILE", c.path);
    for (int version : {2, 3, 4, 5, 6, 7}) {
      INFO("ABI v" << version);
      LogRecorder::instance().take();
      ncclTunerConstants_v7_t constants{};  // large enough for either struct
      Comm comm(version, 16, 2, version >= 5 ? &constants : nullptr);
      CHECK(comm.init_result() == ncclSuccess);
      CHECK(comm.decide(kAllReduce, 100) == untouched_decision(kAllReduce));
      auto lines = LogRecorder::instance().take();
      REQUIRE(lines.size() == 1);
      CHECK(lines[0].level == NCCL_LOG_WARN);
      CHECK(lines[0].flags == NCCL_TUNING);
      CHECK(contains(lines[0].text, c.path));
      CHECK(contains(lines[0].text, "NCCL decides"));
      // A missing profile is said to be missing, not untrusted.
      if (std::string(c.name) == "a FIFO nobody writes") CHECK(contains(lines[0].text, "found a FIFO"));
      if (std::string(c.name) == "2 GiB") CHECK(contains(lines[0].text, "2 GiB is over the 64 MiB limit"));
      if (std::string(c.name) == "missing") {
        CHECK(contains(lines[0].text, "no such file"));
        CHECK_FALSE(contains(lines[0].text, "not trusted"));
      }
    }
  }
}

TEST_CASE("entry points check every pointer and still return success") {
  ProfileFile file(profile_text(matching_profile()));
  Plugin& p = Plugin::get();
  CHECK(p.v5->init(nullptr, 1, 8, 1, record_log, nullptr, nullptr) == ncclSuccess);
  CHECK(p.v4->init(8, 1, record_log, nullptr) == ncclSuccess);
  CHECK(p.v2->init(8, 1, record_log, nullptr) == ncclSuccess);

  CostTable before = nccl_like_table(kAllReduce), table = before;
  int channels = 0;
  CHECK(p.v5->getCollInfo(nullptr, ncclFuncAllReduce, 100, 1, table.as_nccl(), kAlgos, kProtos, 0,
                          &channels) == ncclSuccess);
  CHECK(table == before);
  Comm comm(5, 8, 1, nullptr, /*logger*/ nullptr);  // NCCL may pass no logger
  REQUIRE(comm.ctx());
  CHECK(p.v5->getCollInfo(comm.ctx(), ncclFuncAllReduce, 100, 1, nullptr, kAlgos, kProtos, 0, &channels) ==
        ncclSuccess);
  CHECK(p.v5->getCollInfo(comm.ctx(), ncclFuncAllReduce, 100, 1, table.as_nccl(), kAlgos, kProtos, 0,
                          nullptr) == ncclSuccess);
  CHECK(table == before);
  // A table of another shape than NCCL's is left alone rather than misindexed.
  CHECK(p.v5->getCollInfo(comm.ctx(), ncclFuncAllReduce, 100, 1, table.as_nccl(), kAlgos, 4, 0, &channels) ==
        ncclSuccess);
  CHECK(table == before);
  int a = -1, pr = -1;
  CHECK(p.v2->getCollInfo(nullptr, ncclFuncAllReduce, 100, 0, 0, 1, &a, &pr, &channels) == ncclSuccess);
  Comm v2(2, 8, 1);
  CHECK(p.v2->getCollInfo(v2.ctx(), ncclFuncAllReduce, 100, 0, 0, 1, nullptr, &pr, &channels) == ncclSuccess);
  CHECK(p.v5->finalize(nullptr) == ncclSuccess);
  CHECK(p.v2->destroy(nullptr) == ncclSuccess);
}

TEST_CASE("the sweep hook forces the next collectives, reports refusals, and stops") {
  auto profile = base_profile();
  profile.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::tree, Protocol::ll, 4)};
  ProfileFile file(profile_text(profile));
  Plugin& p = Plugin::get();
  Comm comm(5, 16, 2);
  nccl_autotune_seen_t seen{};
  struct StopForcing {
    ~StopForcing() { Plugin::get().force(-1, -1, 0); }
  } stop_forcing;

  CHECK(p.last(nullptr) == -1);
  CHECK(p.force(7, 0, 0) == -1);
  CHECK(p.force(1, 3, 0) == -1);
  CHECK(p.force(1, -1, 0) == -1);
  CHECK(p.force(1, 2, -1) == -1);

  REQUIRE(p.force(kRing, kSimple, 0) == 0);
  CHECK(comm.decide(kAllReduce, 100) == forced(kRing, kSimple, 0));  // wins over the profile's tree/LL
  CHECK(comm.decide(kAllReduce, 200) == forced(kRing, kSimple, 0));
  REQUIRE(p.last(&seen) == 0);
  CHECK(seen.calls == 2);
  CHECK(seen.collective == kAllReduce);
  CHECK(seen.bytes == 200);
  CHECK((seen.algorithm == kRing && seen.protocol == kSimple));
  CHECK(seen.forced == 1);
  CHECK(seen.refused == 0);

  REQUIRE(p.force(6, kSimple, 8) == 0);  // PAT: NCCL marks it -1 for AllReduce
  CHECK(comm.decide(kAllReduce, 300) == untouched_decision(kAllReduce));
  REQUIRE(p.last(&seen) == 0);
  CHECK(seen.calls == 1);
  CHECK(seen.forced == 0);
  CHECK(seen.refused == 1);
  CHECK(seen.channels == 0);
  CHECK(Choice{seen.algorithm, seen.protocol} == nccl_choice(nccl_like_table(kAllReduce)));

  REQUIRE(p.force(-1, -1, 6) == 0);  // channels only
  CHECK(comm.decide(kAllReduce, 100) == Comm::Decision{nccl_choice(nccl_like_table(kAllReduce)), 6, true});
  REQUIRE(p.last(&seen) == 0);
  CHECK((seen.forced == 1 && seen.channels == 6));

  REQUIRE(p.force(-1, -1, 0) == 0);  // stop forcing: the profile decides again, the hook reports it
  CHECK(comm.decide(kAllReduce, 100) == forced(kTree, kLL, 4));
  REQUIRE(p.last(&seen) == 0);
  CHECK(seen.calls == 1);
  CHECK(seen.forced == 0);
  CHECK((seen.algorithm == kTree && seen.protocol == kLL && seen.channels == 4));

  SECTION("v2 honours the same force") {
    Comm v2(2, 16, 2);
    REQUIRE(p.force(kRing, kLL128, 2) == 0);
    CHECK(v2.decide(kAllReduce, 100) == Comm::Decision{{kRing, kLL128}, 2, false});
    REQUIRE(p.force(4, kSimple, 0) == 0);  // NVLS without NVLS support
    int a = -1, pr = -1, ch = 0;
    v2.coll_info_v2(kAllReduce, 100, 0, 0, a, pr, ch);
    CHECK(a == -1);
    REQUIRE(p.last(&seen) == 0);
    CHECK(seen.refused == 1);
  }
}

TEST_CASE("many communicators on many threads while the profile file is replaced") {
  auto a = base_profile(), b = base_profile();
  a.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::ring, Protocol::simple, 2),
             rule(Collective::allgather, 0, kMiB, Algorithm::ring, Protocol::ll, 2)};
  b.rules = {rule(Collective::allreduce, 0, kMiB, Algorithm::tree, Protocol::simple, 3),
             rule(Collective::allgather, 0, kMiB, Algorithm::ring, Protocol::ll128, 3)};
  const std::string text_a = profile_text(a), text_b = profile_text(b);
  ProfileFile file(text_a);

  constexpr int kThreads = 8, kCommsPerThread = 60;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, comms{0}, first_seen{0};
  // Armed, the sweep hook records every call from every thread while another thread reads it.
  const bool hook_armed = GENERATE(false, true);
  INFO("sweep hook armed: " << hook_armed);
  Plugin& plugin = Plugin::get();
  struct StopForcing {
    ~StopForcing() { Plugin::get().force(-1, -1, 0); }
  } stop_forcing;
  if (hook_armed) REQUIRE(plugin.force(-1, -1, 0) == 0);
  std::thread reader([&] {
    nccl_autotune_seen_t seen;
    while (hook_armed && !done.load()) {
      if (plugin.last(&seen) != 0) ++failures;
      // A torn record would pair an AllGather with AllReduce's Tree, or a collective with no bytes.
      if (seen.collective == kAllGather && seen.algorithm != kRing) ++failures;
      if (seen.collective != -1 && seen.bytes < 1000) ++failures;
    }
  });
  std::thread writer([&] {
    for (int i = 0; !done.load(); ++i) {
      replace_text(file.path, i % 2 ? text_a : text_b);
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommsPerThread; ++i) {
        Comm comm(2 + (t + i) % 6, 16, 2);
        if (comm.init_result() != ncclSuccess) ++failures;
        const int version = comm.version();
        // Every communicator sees the version the first one read, whole, however the file changes.
        auto ar = comm.decide(kAllReduce, 1000 + i);
        auto ag = version == 2 ? Comm::Decision{} : comm.decide(kAllGather, 1000 + i);
        bool is_a = ar.choice == Choice{kRing, kSimple} && ar.channels == 2;
        bool is_b = ar.choice == Choice{kTree, kSimple} && ar.channels == 3;
        if (version != 2) {
          is_a = is_a && ag.choice == Choice{kRing, kLL};
          is_b = is_b && ag.choice == Choice{kRing, kLL128};
        }
        // 1 = A, 2 = B: whichever the process read first, every communicator must see the same.
        const int seen = is_a ? 1 : is_b ? 2 : 0;
        int expected = 0;
        if (seen == 0 || (!first_seen.compare_exchange_strong(expected, seen) && expected != seen))
          ++failures;
        ++comms;
      }
    });
  for (auto& th : threads) th.join();
  done = true;
  writer.join();
  reader.join();
  CHECK(failures == 0);
  CHECK(comms == kThreads * kCommsPerThread);
  auto lines = LogRecorder::instance().take();
  // At most one line says the file changed under the job (none when every communicator was made before the
  // writer first ran); nothing else warns.
  auto warns = lines_at(lines, NCCL_LOG_WARN);
  CHECK(warns.size() <= 1);
  for (const auto& w : warns) CHECK(contains(w.text, "changed on disk since this process read it"));
}

namespace {

// Rules for two kinds of communicator of a 4 x 8 calibration: whole nodes, and one rank per node.
autotune::profiles::Profile shaped_profile() {
  auto p = base_profile();
  auto whole = rule(Collective::allreduce, 0, kMiB, Algorithm::tree, Protocol::simple, 0, CountRange{4, 4},
                    CountRange{32, 32});
  whole.ranks_per_node = CountRange{8, 8};
  auto one_per_node = rule(Collective::allreduce, 0, kMiB, Algorithm::ring, Protocol::ll, 0, CountRange{4, 4},
                           CountRange{4, 4});
  one_per_node.ranks_per_node = CountRange{1, 1};
  p.rules = {whole, one_per_node};
  p.uncalibrated = autotune::profiles::UncalibratedPolicy::nearest_scale;
  return p;
}

}  // namespace

TEST_CASE("rules are chosen by nodes and ranks per node, nearest never borrows another kind's") {
  ProfileFile file(profile_text(shaped_profile()));
  const int version = GENERATE(4, 5, 7);  // v4 has no per-node counts: an even spread is assumed
  INFO("ABI v" << version);
  LogRecorder::instance().take();
  CHECK(Comm(version, 32, 4).decide(kAllReduce, 100) == forced(kTree, kSimple, 0));
  CHECK(Comm(version, 4, 4).decide(kAllReduce, 100) == forced(kRing, kLL, 0));
  // Uncalibrated, nearest: 8 x 1 borrows 4 x 1's rules, 8 x 8 those of 4 x 8; 2 x 4 (part of a node) none.
  CHECK(Comm(version, 8, 8).decide(kAllReduce, 100) == forced(kRing, kLL, 0));
  CHECK(Comm(version, 64, 8).decide(kAllReduce, 100) == forced(kTree, kSimple, 0));
  CHECK(Comm(version, 8, 2).decide(kAllReduce, 100) == untouched_decision(kAllReduce));
  auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
  REQUIRE(info.size() == 5);
  CHECK(contains(info[2].text,
                 "apply to 8x1 (8 ranks); shape not calibrated, policy nearest: the rules of 4x1"));
  CHECK(contains(info[3].text,
                 "apply to 8x8 (64 ranks); shape not calibrated, policy nearest: the rules of 4x8"));
  CHECK(contains(info[4].text, "0 of 2 rules apply to 2x4 (8 ranks)"));
}

TEST_CASE("an uneven communicator gets no rule made for even nodes, and says what it is") {
  ProfileFile file(profile_text(shaped_profile()));
  LogRecorder::instance().take();
  // 32 ranks on 4 nodes, but 4 on one and 12 on another: NCCL's v5+ init says so.
  Comm uneven(5, 32, 4, nullptr, record_log, std::pair<int, int>{4, 12});
  CHECK(uneven.decide(kAllReduce, 100) == untouched_decision(kAllReduce));
  auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
  REQUIRE(info.size() == 1);
  CHECK(contains(info[0].text, "0 of 2 rules apply to 4x4-12 (32 ranks)"));
}

TEST_CASE("a job pinned to a profile's digest uses only that content, and names both digests otherwise") {
  const std::string text = profile_text(shaped_profile());
  ProfileFile file(text);
  const std::string digest = autotune::profiles::digest_text(autotune::profiles::profile_digest(text));
  SECTION("the pinned digest") {
    ScopedEnv pin("NCCL_AUTOTUNE_PROFILE_DIGEST", digest);
    LogRecorder::instance().take();
    CHECK(Comm(5, 32, 4).decide(kAllReduce, 100) == forced(kTree, kSimple, 0));
    auto info = lines_at(LogRecorder::instance().take(), NCCL_LOG_INFO);
    REQUIRE(info.size() == 1);
    CHECK(contains(info[0].text, "digest " + digest));
  }
  SECTION("another digest") {
    ScopedEnv pin("NCCL_AUTOTUNE_PROFILE_DIGEST", "00000000deadbeef");
    LogRecorder::instance().take();
    CHECK(Comm(5, 32, 4).decide(kAllReduce, 100) == untouched_decision(kAllReduce));
    auto warns = lines_at(LogRecorder::instance().take(), NCCL_LOG_WARN);
    REQUIRE(warns.size() == 1);
    CHECK(contains(
        warns[0].text,
        "pinned to digest 00000000deadbeef (NCCL_AUTOTUNE_PROFILE_DIGEST), the file's is " + digest));
    CHECK(contains(warns[0].text, "NCCL decides"));
  }
}

TEST_CASE("a profile for another NCCL major.minor is not applied unless the profile or the user allows it") {
  auto p = shaped_profile();  // made for 2.28.9
  struct Restore {
    ~Restore() { g_harness_nccl_version = 22809; }
  } restore;
  SECTION("another patch release of the same minor: applied") {
    g_harness_nccl_version = 22805;
    ProfileFile file(profile_text(p));
    CHECK(Comm(5, 32, 4).decide(kAllReduce, 100) == forced(kTree, kSimple, 0));
  }
  SECTION("another minor: refused, both versions named") {
    g_harness_nccl_version = 23007;
    ProfileFile file(profile_text(p));
    LogRecorder::instance().take();
    CHECK(Comm(5, 32, 4).decide(kAllReduce, 100) == untouched_decision(kAllReduce));
    auto warns = lines_at(LogRecorder::instance().take(), NCCL_LOG_WARN);
    REQUIRE(warns.size() == 1);
    CHECK(contains(warns[0].text, "made for NCCL 2.28.9, this job runs NCCL 2.30.7"));
  }
  SECTION("another minor, the profile allows it") {
    g_harness_nccl_version = 23007;
    p.apply_under_other_nccl = true;
    ProfileFile file(profile_text(p));
    CHECK(Comm(5, 32, 4).decide(kAllReduce, 100) == forced(kTree, kSimple, 0));
  }
  SECTION("another minor, the user allows it") {
    g_harness_nccl_version = 23007;
    ProfileFile file(profile_text(p));
    ScopedEnv allow("NCCL_AUTOTUNE_OTHER_NCCL", "apply");
    CHECK(Comm(5, 32, 4).decide(kAllReduce, 100) == forced(kTree, kSimple, 0));
  }
}
