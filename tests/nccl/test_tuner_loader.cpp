// NCCL's way of loading a tuner plugin, checked against the built plugin: the library names tried, the struct
// version each NCCL release picks, v2 wrapped into the cost table, and NCCL's pick from the table.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "nccl/tuner_loader.hpp"
#include "nccl/vocabulary.hpp"

using namespace autotune::nccl;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// NCCL's table for an AllReduce on one node without CollNet: Ring and Tree usable, NVLS Simple usable.
std::vector<float> allreduce_table() {
  std::vector<float> t(kNumAlgorithms * kNumProtocols, -1.0f);
  for (int p = 0; p < kNumProtocols; ++p) {
    t[static_cast<int>(Algorithm::tree) * kNumProtocols + p] = 30.0f + p;
    t[static_cast<int>(Algorithm::ring) * kNumProtocols + p] = 20.0f + p;
  }
  t[static_cast<int>(Algorithm::nvls) * kNumProtocols + static_cast<int>(Protocol::simple)] = 10.0f;
  return t;
}

}  // namespace

TEST_CASE("each NCCL release looks up the struct versions it knows, newest first", "[tuner_loader]") {
  CHECK(tuner_versions_looked_up(21905).empty());
  CHECK(tuner_versions_looked_up(22105) == std::vector<int>{2});
  CHECK(tuner_versions_looked_up(22203) == std::vector<int>{3, 2});
  CHECK(tuner_versions_looked_up(22202) == std::vector<int>{2});
  CHECK(tuner_versions_looked_up(22403) == std::vector<int>{4, 3, 2});
  CHECK(tuner_versions_looked_up(22802) == std::vector<int>{4, 3, 2});
  CHECK(tuner_versions_looked_up(22809) == std::vector<int>{5, 4, 3, 2});
  CHECK(tuner_versions_looked_up(23007) == std::vector<int>{6, 5, 4, 3, 2});
  CHECK(tuner_versions_looked_up(23203) == std::vector<int>{6, 5, 4, 3, 2});  // 2.32.3 has no v7 yet
  CHECK(tuner_versions_looked_up(23206) == std::vector<int>{7, 6, 5, 4, 3, 2});
}

TEST_CASE("the plugin opens by path and by bare name, with the struct the NCCL release picks",
          "[tuner_loader]") {
  std::vector<std::string> log;
  auto v5 = TunerPlugin::open({AUTOTUNE_PLUGIN_PATH, 22809, std::nullopt}, &log);
  REQUIRE(v5);
  CHECK(v5->version() == 5);
  CHECK(v5->name() == "autotune");
  auto v6 = TunerPlugin::open({AUTOTUNE_PLUGIN_PATH, 23007, std::nullopt}, &log);
  REQUIRE(v6);
  CHECK(v6->version() == 6);
  auto v7 = TunerPlugin::open({AUTOTUNE_PLUGIN_PATH, 23206, std::nullopt}, &log);
  REQUIRE(v7);
  CHECK(v7->version() == 7);

  // A bare name is tried as given (it fails), then as libnccl-tuner-<name>.so on the library search path.
  // dlopen reads LD_LIBRARY_PATH at process start, so the bare name is given as the directory's file here.
  log.clear();
  const std::string dir = AUTOTUNE_PLUGIN_DIR;
  auto none = TunerPlugin::open({"no-such-tuner", 22809, std::nullopt}, &log);
  CHECK_FALSE(none);
  const std::string text = joined(log);
  INFO(text);
  CHECK(text.find("TUNER/Plugin: no-such-tuner: ") != std::string::npos);
  CHECK(text.find("TUNER/Plugin: libnccl-tuner-no-such-tuner.so: ") != std::string::npos);
  CHECK(text.find("no tuner plugin opened") != std::string::npos);

  // A lib*.so name or a path is not retried with the prefix.
  log.clear();
  CHECK_FALSE(TunerPlugin::open({"libmissing.so", 22809, std::nullopt}, &log));
  CHECK(joined(log).find("libnccl-tuner-") == std::string::npos);
  log.clear();
  CHECK_FALSE(TunerPlugin::open({dir + "/missing.so", 22809, std::nullopt}, &log));
  CHECK(joined(log).find("libnccl-tuner-") == std::string::npos);
}

TEST_CASE("NCCL_TUNER_PLUGIN=none disables the plugin in any case", "[tuner_loader]") {
  std::vector<std::string> log;
  CHECK_FALSE(TunerPlugin::open({"None", 22809, std::nullopt}, &log));
  REQUIRE(log.size() == 1);
  CHECK(log[0].find("no tuner plugin") != std::string::npos);
}

TEST_CASE("an unset NCCL_TUNER_PLUGIN tries libnccl-tuner.so", "[tuner_loader]") {
  std::vector<std::string> log;
  CHECK_FALSE(TunerPlugin::open({std::nullopt, 22809, std::nullopt}, &log));
  CHECK(joined(log).find("TUNER/Plugin: libnccl-tuner.so: ") != std::string::npos);
}

TEST_CASE("every struct version steers the same rule into NCCL's table", "[tuner_loader]") {
  REQUIRE(setenv("NCCL_AUTOTUNE_PROFILE", AUTOTUNE_TEST_PROFILE, 1) == 0);
  REQUIRE(setenv("NCCL_AUTOTUNE_INSECURE", "1", 1) == 0);  // the source tree's file may be group-writable
  for (int version : {2, 3, 4, 5, 6, 7}) {
    INFO("v" << version);
    auto plugin = TunerPlugin::open({AUTOTUNE_PLUGIN_PATH, 23206, version}, nullptr);
    REQUIRE(plugin);
    REQUIRE(plugin->version() == version);
    ncclNvlDomainInfo_v5_t nvl{1, 8, 8};
    void* ctx = nullptr;
    REQUIRE(plugin->init(&ctx, 0x99, 8, 1, nullptr, &nvl, nullptr) == ncclSuccess);
    std::vector<float> table = allreduce_table();
    // NCCL's own pick is NVLS/Simple; the profile's rule forces Ring/Simple for every AllReduce.
    REQUIRE(cheapest_entry(table.data()) == TableChoice{4, 2});
    int channels = 0;
    REQUIRE(plugin->get_coll_info(ctx, ncclFuncAllReduce, 1 << 20, 1, table.data(), 0, &channels) ==
            ncclSuccess);
    CHECK(cheapest_entry(table.data()) == TableChoice{1, 2});
    CHECK(channels == 0);
    REQUIRE(plugin->finalize(ctx) == ncclSuccess);
  }
  unsetenv("NCCL_AUTOTUNE_PROFILE");
  unsetenv("NCCL_AUTOTUNE_INSECURE");
}

TEST_CASE("NCCL's pick from the table: smallest usable entry, ties to the lower index", "[tuner_loader]") {
  std::vector<float> t(kNumAlgorithms * kNumProtocols, -1.0f);
  CHECK_FALSE(cheapest_entry(t.data()));
  t[1 * kNumProtocols + 2] = 5.0f;
  t[0 * kNumProtocols + 1] = 5.0f;
  CHECK(cheapest_entry(t.data()) == TableChoice{0, 1});
  t[4 * kNumProtocols + 2] = 0.0f;
  CHECK(cheapest_entry(t.data()) == TableChoice{4, 2});
}

TEST_CASE("constants reach every version as the imitated NCCL passes them", "[tuner_loader]") {
  REQUIRE(setenv("NCCL_AUTOTUNE_PROFILE", AUTOTUNE_CONSTANTS_PROFILE, 1) == 0);
  REQUIRE(setenv("NCCL_AUTOTUNE_INSECURE", "1", 1) == 0);
  // The profile sets ll_max_bw.hopper.2 = 40 and per_ch_max_tree_bw.rubin.1 = 90.
  for (int version : {5, 6, 7}) {
    INFO("v" << version);
    auto plugin = TunerPlugin::open({AUTOTUNE_PLUGIN_PATH, 23206, version}, nullptr);
    REQUIRE(plugin);
    ncclNvlDomainInfo_v5_t nvl{1, 8, 8};
    void* ctx = nullptr;
    // As NCCL 2.32.6: the v7 struct. A v5/v6 plugin sees only the first four rows, so Rubin's stays.
    ncclTunerConstants_v7_t newer{};
    newer.perChMaxTreeBws[4][0] = 7.0;
    REQUIRE(plugin->init(&ctx, 1, 8, 2, nullptr, &nvl, &newer) == ncclSuccess);
    CHECK(newer.llMaxBws[2][1] == 40.0);
    CHECK(newer.perChMaxTreeBws[4][0] == (version == 7 ? 90.0 : 7.0));
    REQUIRE(plugin->finalize(ctx) == ncclSuccess);
    // As an NCCL before 2.32.6: the v5 struct; a v7 plugin's Rubin entry goes nowhere.
    ncclTunerConstants_v5_t older{};
    REQUIRE(plugin->init(&ctx, 1, 8, 2, nullptr, &nvl, &older) == ncclSuccess);
    CHECK(older.llMaxBws[2][1] == 40.0);
    REQUIRE(plugin->finalize(ctx) == ncclSuccess);
  }
  unsetenv("NCCL_AUTOTUNE_PROFILE");
  unsetenv("NCCL_AUTOTUNE_INSECURE");
}

TEST_CASE("getChunkSize is there for v6 and v7 only", "[tuner_loader]") {
  for (int version : {5, 6, 7}) {
    INFO("v" << version);
    auto plugin = TunerPlugin::open({AUTOTUNE_PLUGIN_PATH, 23206, version}, nullptr);
    REQUIRE(plugin);
    void* ctx = nullptr;
    ncclNvlDomainInfo_v5_t nvl{1, 8, 8};
    REQUIRE(plugin->init(&ctx, 1, 8, 1, nullptr, &nvl, nullptr) == ncclSuccess);
    size_t chunk = 4096;
    ncclResult_t result = ncclInternalError;
    CHECK(plugin->get_chunk_size(ctx, ncclFuncAllReduce, 1 << 20, 1, 2, 8, &chunk, &result) ==
          (version >= 6));
    CHECK(chunk == 4096);  // no profile: NCCL's own
    if (version >= 6) CHECK(result == ncclSuccess);
    REQUIRE(plugin->finalize(ctx) == ncclSuccess);
  }
}
