// The decision map against profiles whose rules are known: every range the profile decides is exactly one
// rule's byte range, every other range is NCCL's pick from the model's table, and sizes inside each range
// get that range's decision when the plugin is asked directly.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "common/input_error.hpp"
#include "explain/explain.hpp"
#include "explain/explain_output.hpp"
#include "profiles/profile_toml.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_model.hpp"
#include "support/temp_dir.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"

using autotune::test::TempDir;

using namespace autotune;
using namespace autotune::explain;
using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

namespace {

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

profiles::Rule rule(Collective c, uint64_t lo, uint64_t hi, Algorithm a, Protocol p, int channels = 0) {
  profiles::Rule r;
  r.collective = c;
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algorithm = a;
  r.protocol = p;
  r.channels = channels;
  return r;
}

profiles::Profile known_profile() {
  profiles::Profile p;
  p.cluster.name = "explain-test";
  p.cluster.gpu_model = "NVIDIA H100 80GB HBM3";
  p.cluster.gpus_per_node = 8;
  p.cluster.nics_per_node = 8;
  p.provenance.created = "2026-12-01T00:00:00Z";
  p.provenance.nccl_version = "2.30.7";
  p.provenance.source = profiles::Source::simulated;
  p.rules = {
      rule(Collective::allreduce, 1000, 65535, Algorithm::tree, Protocol::ll, 4),
      rule(Collective::allreduce, 65536, 1048575, Algorithm::ring, Protocol::ll128),
      rule(Collective::allreduce, 3000000, 3000000, Algorithm::ring, Protocol::simple, 2),  // one byte count
      rule(Collective::allreduce, (uint64_t(1) << 30) + 7, (uint64_t(3) << 30) - 1, Algorithm::ring,
           Protocol::simple, 16),
      // CollNet: the modelled node has no SHARP, so NCCL rules the entry out and decides itself there.
      rule(Collective::allreduce, 5000000, 6000000, Algorithm::collnet_direct, Protocol::simple),
      rule(Collective::allgather, 4097, 8191, Algorithm::ring, Protocol::ll, 8),
      rule(Collective::reducescatter, 123, 456789, Algorithm::ring, Protocol::simple),
  };
  p.rules[3].chunk_bytes = 1 << 20;
  return p;
}

struct Setup {
  TempDir dir;
  std::filesystem::path profile;
  explicit Setup(const profiles::Profile& p) : profile(dir.path() / "p.toml") {
    write(profile, profiles::format_profile(p));
    std::filesystem::permissions(profile,
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
};

ExplainOptions options_for(const std::filesystem::path& profile) {
  ExplainOptions o;
  o.profile_path = profile.string();
  o.plugin_path = AUTOTUNE_PLUGIN_PATH;
  o.nodes = 2;
  o.ranks = 16;
  o.example = "h100-8x";
  return o;
}

const CollectiveMap& map_of(const Explanation& e, Collective c) {
  for (const auto& m : e.map.collectives)
    if (m.collective == c) return m;
  FAIL("no map for the collective");
  throw;
}

}  // namespace

TEST_CASE("explain: the ranges the profile decides are exactly its rules' byte ranges", "[explain]") {
  const profiles::Profile p = known_profile();
  Setup s(p);
  const Explanation e = explain::explain(options_for(s.profile));
  REQUIRE(e.map.abi_version == 7);
  REQUIRE(e.map.collectives.size() == 5);

  // Collect what the profile decided, per collective, as (first, last) pairs.
  for (const CollectiveMap& m : e.map.collectives) {
    INFO(nccl::name(m.collective));
    REQUIRE_FALSE(m.ranges.empty());
    CHECK(m.ranges.front().first == 0);
    CHECK(m.ranges.back().last == uint64_t(16) << 30);
    for (size_t i = 1; i < m.ranges.size(); ++i) {
      CHECK(m.ranges[i].first == m.ranges[i - 1].last + 1);
      CHECK_FALSE(m.ranges[i].decision == m.ranges[i - 1].decision);
    }
    std::vector<std::pair<uint64_t, uint64_t>> decided, expected;
    for (const Range& r : m.ranges)
      if (r.decision.by_plugin) decided.push_back({r.first, r.last});
    for (const auto& r : p.rules)
      if (r.collective == m.collective && r.algorithm != Algorithm::collnet_direct)
        expected.push_back({r.min_bytes, std::min(r.max_bytes, uint64_t(16) << 30)});
    std::sort(expected.begin(), expected.end());
    CHECK(decided == expected);
  }
  const CollectiveMap& ar = map_of(e, Collective::allreduce);
  auto at = [&](uint64_t b) -> const Decision& {
    for (const Range& r : ar.ranges)
      if (r.first <= b && b <= r.last) return r.decision;
    FAIL("no range");
    throw;
  };
  CHECK(at(1000).algorithm == Algorithm::tree);
  CHECK(at(1000).protocol == Protocol::ll);
  CHECK(at(1000).channels == 4);
  CHECK(at(3000000).channels == 2);
  CHECK(at(uint64_t(2) << 30).chunk == (1u << 20));
  CHECK(at(uint64_t(2) << 30).channels == 16);
  CHECK_FALSE(at(5500000).by_plugin);  // CollNet ruled out by NCCL on this node: its own choice
  for (const Range& r : map_of(e, Collective::broadcast).ranges) {  // no rules: NCCL's choices, all Ring
    CHECK_FALSE(r.decision.by_plugin);
    CHECK(r.decision.algorithm == Algorithm::ring);
  }
}

TEST_CASE(
    "explain: NCCL's ranges are its pick from the model's table, and every size inside a range gets "
    "that range's decision",
    "[explain]") {
  Setup s(known_profile());
  const ExplainOptions o = options_for(s.profile);
  const Explanation e = explain::explain(o);
  sim::SimCluster cluster = sim::describe_cluster(topology::load_example("h100-8x"), 2);
  const sim::SimModel model(cluster);
  std::mt19937_64 rng(7);
  for (const CollectiveMap& m : e.map.collectives)
    for (const Range& r : m.ranges) {
      INFO(nccl::name(m.collective) << " " << r.first << "-" << r.last);
      if (!r.decision.by_plugin) {
        for (uint64_t b : {r.first, r.last}) {
          const auto table = model.cost_table(m.collective, b);
          const auto pick = nccl::cheapest_entry(table.data());
          REQUIRE(pick);
          CHECK(static_cast<int>(r.decision.algorithm) == pick->algorithm);
          CHECK(static_cast<int>(r.decision.protocol) == pick->protocol);
        }
      }
    }
  // Sizes inside ranges, asked of the plugin directly through the loader.
  setenv("NCCL_AUTOTUNE_PROFILE", s.profile.c_str(), 1);
  auto plugin = nccl::TunerPlugin::open({AUTOTUNE_PLUGIN_PATH, 23206, std::nullopt}, nullptr);
  REQUIRE(plugin);
  void* ctx = nullptr;
  ncclNvlDomainInfo_v5_t nvl{2, 8, 8};
  REQUIRE(plugin->init(&ctx, 1, 16, 2, nullptr, &nvl, nullptr) == ncclSuccess);
  for (const CollectiveMap& m : e.map.collectives)
    for (const Range& r : m.ranges)
      for (int k = 0; k < 8; ++k) {
        const uint64_t b = r.first + rng() % (r.last - r.first + 1);
        auto table = model.cost_table(m.collective, b), before = table;
        int channels = 0;
        plugin->get_coll_info(ctx, static_cast<ncclFunc_t>(m.collective), b, 1, table.data(), 0, &channels);
        const auto pick = nccl::cheapest_entry(table.data());
        INFO(nccl::name(m.collective) << " " << b);
        CHECK((table != before || channels != 0) == r.decision.by_plugin);
        CHECK(pick->algorithm == static_cast<int>(r.decision.algorithm));
        CHECK(pick->protocol == static_cast<int>(r.decision.protocol));
        CHECK(channels == r.decision.channels);
      }
  plugin->finalize(ctx);
  unsetenv("NCCL_AUTOTUNE_PROFILE");
}

TEST_CASE("explain: model crossovers are found to the byte, also several between two probes", "[explain]") {
  // A made-up cost model with three choices between the probes 4097 and 8191, and no profile.
  unsetenv("NCCL_AUTOTUNE_PROFILE");
  unsetenv("NCCL_TUNER_CONFIG_FILE");
  MapRequest r;
  r.open.plugin = AUTOTUNE_PLUGIN_PATH;
  r.open.nccl_version_code = 23206;
  r.nodes = 1;
  r.ranks = 8;
  r.max_bytes = 1 << 20;
  r.collectives = {Collective::allreduce};
  auto model = [](Collective, uint64_t bytes) {
    CostTable t;
    t.fill(-1.0f);
    t[1 * 3 + 0] = bytes < 5000 ? 1.0f : 9.0f;                   // ring/ll
    t[1 * 3 + 2] = bytes >= 5000 && bytes < 6001 ? 1.0f : 8.0f;  // ring/simple
    t[0 * 3 + 2] = bytes >= 6001 ? 1.0f : 7.0f;                  // tree/simple
    return t;
  };
  std::string why;
  auto map = map_decisions(r, model, &why);
  REQUIRE(map);
  const auto& ranges = map->collectives.at(0).ranges;
  REQUIRE(ranges.size() == 3);
  CHECK(ranges[0].last == 4999);
  CHECK(ranges[1].first == 5000);
  CHECK(ranges[1].last == 6000);
  CHECK(ranges[2].first == 6001);
  CHECK(ranges[2].decision.algorithm == Algorithm::tree);
  CHECK_FALSE(ranges[2].decision.by_plugin);
  // The plugin found no profile and said so.
  REQUIRE(map->plugin_log.size() == 1);
  CHECK(map->plugin_log[0].find("no profile") != std::string::npos);
}

TEST_CASE("explain: a CSV profile, its per-call conditions and the lines it skips", "[explain]") {
  TempDir dir;
  const auto csv = dir.path() / "nccl_tuner.conf";
  write(csv,
        "allreduce,0,65535,tree,ll,2,-1,-1,-1,1\n"
        "allreduce,0,65535,ring,ll,-1,-1,-1,4,-1\n"
        "allreduce,0,65535,warp,ll,-1,-1,-1\n");
  std::filesystem::permissions(csv, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ExplainOptions o = options_for(csv);
  o.collectives = {Collective::allreduce};
  auto first_choice = [&](int pipe_ops, int reg_buff) {
    o.pipe_ops = pipe_ops;
    o.reg_buff = reg_buff;
    const Explanation e = explain::explain(o);
    REQUIRE(e.profile_format == "CSV");
    REQUIRE(e.skipped.size() == 1);
    CHECK(e.skipped[0].line == 3);
    return e.map.collectives.at(0).ranges.at(0);
  };
  CHECK(first_choice(1, 1).decision.algorithm == Algorithm::tree);
  CHECK(first_choice(4, 0).decision.protocol == Protocol::ll);
  CHECK(first_choice(4, 0).decision.algorithm == Algorithm::ring);
  CHECK(first_choice(4, 0).last == 65535);
  CHECK_FALSE(first_choice(1, 0).decision.by_plugin);
}

TEST_CASE("explain: bad input is refused before any work, naming file and line", "[explain]") {
  TempDir dir;
  write(dir.path() / "bad.toml",
        profiles::format_profile(known_profile()) + "\n[[rule]]\ncollective = \"alltoall\"\n");
  ExplainOptions o = options_for(dir.path() / "bad.toml");
  try {
    explain::explain(o);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("bad.toml:") != std::string::npos);
    CHECK(std::string(e.what()).find("rule[8].collective: expected one of") != std::string::npos);
  }
  o = options_for(dir.path() / "bad.toml");
  o.ranks = 15;
  CHECK_THROWS_WITH(explain::explain(o), Catch::Contains("--ranks: expected a multiple of --nodes (2)"));
  o.ranks = 1;
  o.nodes = 1;
  CHECK_THROWS_WITH(explain::explain(o), Catch::Contains("--ranks: expected a count >= 2"));
}

TEST_CASE("explain: the node to model comes from the profile's fingerprint, else its GPU and NIC counts",
          "[explain]") {
  profiles::ClusterInfo c;
  c.gpu_model = "NVIDIA H100 80GB HBM3";
  c.gpus_per_node = 8;
  CHECK_FALSE(example_for(c, "2.28.9"));  // two bundled H100 nodes: which one?
  c.fingerprint = topology::fingerprint(topology::load_example("h100-8x-2nic"), 228);
  CHECK(example_for(c, "2.28.9") == std::optional<std::string>("h100-8x-2nic"));
  c.fingerprint.clear();
  c.nics_per_node = 8;
  CHECK(example_for(c, "2.28.9") == std::optional<std::string>("h100-8x"));
  c.gpu_model = "H100 80GB HBM3";  // as a probe without the vendor prefix names it
  CHECK(example_for(c, "2.28.9") == std::optional<std::string>("h100-8x"));
  c.gpu_model = "NVIDIA B200";
  CHECK_FALSE(example_for(c, "2.28.9"));
}

TEST_CASE("explain: text and JSON say which choices are modelled", "[explain]") {
  Setup s(known_profile());
  ExplainOptions o = options_for(s.profile);
  o.collectives = {Collective::allgather};
  const Explanation e = explain::explain(o);
  const std::string text = format_text(e);
  CHECK(text.find("NCCL's own choices are modelled, not measured") != std::string::npos);
  CHECK(std::regex_search(text, std::regex("\n +4097 - 8191 +\\(4\\.0 KiB - 8\\.0 KiB\\) +profile +ring/ll +"
                                           "channels 8\n")));
  CHECK(
      std::regex_search(text, std::regex("\n +0 - 4096 +\\(0 B - 4 KiB\\) +NCCL \\(modelled\\) +ring/ll\n")));
  const std::string json = format_json(e);
  CHECK(json.find("\"decided_by\": \"nccl-modelled\"") != std::string::npos);
  CHECK(json.find("\"first\": 4097") != std::string::npos);
}

// Issue 14: NCCL's choices are modelled for the communicator's own shape. One rank per node has no NVLink
// peer, so NCCL never runs NVLS there, though the node has NVSwitches.
TEST_CASE("explain: NCCL's choices are modelled for the communicator's shape", "[explain]") {
  Setup s(known_profile());
  ExplainOptions o = options_for(s.profile);
  o.collectives = {Collective::allreduce};
  auto uses_nvls = [&](int nodes, int ranks) {
    o.nodes = nodes;
    o.ranks = ranks;
    const Explanation e = explain::explain(o);
    for (const Range& r : map_of(e, Collective::allreduce).ranges)
      if (r.decision.algorithm == Algorithm::nvls) return true;
    return false;
  };
  CHECK(uses_nvls(4, 32));
  CHECK_FALSE(uses_nvls(4, 4));
  o.nodes = 1;
  o.ranks = 16;
  CHECK_THROWS_WITH(explain::explain(o),
                    Catch::Contains("1 to 8 ranks per node (the node's GPUs), found 16"));
}
