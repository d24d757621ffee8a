// check end to end on the simulator (the runner seam the NCCL runner also sits behind): a healthy cluster
// flags nothing, sick nodes are named with their devices and nothing else; the probe's own findings, the
// nodes' fabric settings, a pass that fails; the JSON; the records of a job's nodes gathered across ranks.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>

#include "check/check.hpp"
#include "check/check_context.hpp"
#include "check/check_json.hpp"
#include "check/node_records.hpp"
#include "common/input_error.hpp"
#include "simulator/sim_fault.hpp"
#include "support/thread_process_group.hpp"
#include "topology/examples.hpp"
#include "topology/reader.hpp"

using namespace autotune;
using namespace autotune::check;

namespace {

// The simulator's runner options for `nodes` of `node` with `faults` ("node=3,nic=1,rate=0.5").
measure::RunnerOptions simulated_job(const topology::Topology& node, int nodes,
                                     const std::vector<std::string>& faults = {}) {
  measure::RunnerOptions job;
  job.simulate = true;
  job.topology = node;
  job.nodes = nodes;
  for (const auto& f : faults) job.faults.push_back(sim::parse_sim_fault(f));
  return job;
}

CheckReport simulate(const std::string& example, int nodes, const std::vector<std::string>& faults = {},
                     CheckOptions options = {}) {
  return run_check(options, simulated_context(simulated_job(topology::load_example(example), nodes, faults)));
}

// "node 3 mlx5_1 block" for every finding.
std::set<std::string> flagged(const CheckReport& r) {
  std::set<std::string> out;
  for (const auto& n : r.nodes)
    for (const auto& f : n.health.findings)
      out.insert("node " + std::to_string(n.health.node) + " " + f.device + " " +
                 std::string(topology::severity_name(f.severity)));
  return out;
}

topology::Topology fixture(const std::string& name) {
  return topology::read_topology_file(std::string(AUTOTUNE_SOURCE_DIR) + "/tests/topology/fixtures/health/" +
                                      name);
}

}  // namespace

TEST_CASE("health: check of a simulated healthy 8 x H100 cluster flags nothing", "[check][health]") {
  const auto r = simulate("h100-8x", 8);
  CHECK(r.status() == "ok");
  CHECK_FALSE(r.blocks());
  CHECK(flagged(r).empty());
  CHECK(r.passes.size() == 7);
  // The point-to-point baselines: the job's all-to-all, and every rail's ring, near their median.
  REQUIRE(r.baselines.alltoall_gbps.has_value());
  CHECK(*r.baselines.alltoall_gbps > 0.0);
  CHECK(r.baselines.ring_median > 0.0);
  CHECK(r.nodes[4].baselines.ring_gbps.at(6).value() == Approx(r.baselines.ring_median).epsilon(0.1));
  CHECK(r.source == "simulated");
  CHECK(r.runner.rfind("SIMULATED", 0) == 0);
  REQUIRE(r.nodes.size() == 8);
  CHECK(r.nodes[4].baselines.allreduce_gbps.value() == Approx(r.baselines.allreduce_median).epsilon(0.05));
  // The other bundled nodes and other node counts too.
  for (const auto& example : {"h100-8x-2nic", "a100-pcie-8x"})
    for (int nodes : {1, 2, 3, 5}) {
      INFO(example << " x " << nodes);
      CHECK(flagged(simulate(example, nodes)).empty());
    }
}

TEST_CASE("health: a half-rate NIC on node 3 and a throttled GPU on node 5: exactly those nodes and devices",
          "[check][health]") {
  const auto r = simulate("h100-8x", 8, {"node=3,nic=1,rate=0.5", "node=5,gpu=2,clock=0.6"});
  CHECK(r.blocks());
  CHECK(r.status() == "block");
  CHECK(flagged(r) == std::set<std::string>{"node 3 mlx5_1 block", "node 5 GPU2 block"});
  CHECK(r.nodes[3].health.findings.at(0).kind == "nic_bandwidth_low");
  CHECK(r.nodes[5].health.findings.at(0).kind == "gpu_bandwidth_low");
  CHECK(r.nodes[3].health.findings.at(0).source == "check: simulated");
  // The sick NIC's rail carries half; the GPU's node and pairs at its clock.
  CHECK(*r.nodes[3].baselines.rail_gbps[1] == Approx(0.5 * r.baselines.rail_median).epsilon(0.05));
  CHECK(*r.nodes[5].baselines.allreduce_gbps == Approx(0.6 * r.baselines.allreduce_median).epsilon(0.05));
}

TEST_CASE("health: slow NVLinks and sick devices at the ends of an odd cluster are pinned too",
          "[check][health]") {
  CHECK(flagged(simulate("h100-8x", 4, {"node=1,gpu=0,nvlink=0.5"})) ==
        std::set<std::string>{"node 1 GPU0 block"});
  // Five nodes: node 4 sits out one rail pass; its two others still pin its NIC.
  CHECK(flagged(simulate("h100-8x", 5, {"node=4,nic=6,rate=0.5"})) ==
        std::set<std::string>{"node 4 mlx5_6 block"});
  CHECK(flagged(simulate("h100-8x-2nic", 3, {"node=0,nic=1,rate=0.85"})) ==
        std::set<std::string>{"node 0 mlx5_1 warn"});
}

TEST_CASE("health: a node's probe findings come first, and health-only measures nothing", "[check][health]") {
  measure::RunnerOptions job = simulated_job(fixture("clock_throttled.json"), 2);
  CheckOptions health_only;
  health_only.measure = false;
  const auto r = run_check(health_only, simulated_context(job));
  CHECK(r.passes.empty());
  CHECK_FALSE(r.measured);
  CHECK(flagged(r) == std::set<std::string>{"node 0 GPU1 block", "node 1 GPU1 block"});
  CHECK(r.nodes[0].health.findings.at(0).kind == "clock_throttled");
  // The healthy record's fabric settings, agreed by both nodes, for the profile's [env].
  job.topology = fixture("healthy.json");
  const auto healthy = run_check(health_only, simulated_context(job));
  CHECK(healthy.status() == "ok");
  CHECK(healthy.fabric_env ==
        std::map<std::string, std::string>{{"NCCL_IB_GID_INDEX", "3"}, {"NCCL_SOCKET_IFNAME", "=eth0"}});
}

TEST_CASE("health: a node whose fabric settings differ from the others' is named", "[check][health]") {
  CheckContext c = simulated_context(simulated_job(fixture("healthy.json"), 3));
  c.nodes[2].topology = fixture("roce_gid_index_differs.json");
  CheckOptions health_only;
  health_only.measure = false;
  const auto r = run_check(health_only, c);
  bool differs = false;
  for (const auto& f : r.nodes[2].health.findings) differs = differs || f.kind == "fabric_setup_differs";
  CHECK(differs);
  CHECK(r.nodes[0].health.findings.empty());
  CHECK(r.fabric_env == std::map<std::string, std::string>{{"NCCL_SOCKET_IFNAME", "=eth0"}});
}

TEST_CASE("health: a pass that cannot measure blocks every node, saying why", "[check][health]") {
  struct Failing : runners::Runner {
    runners::RunnerInfo info() const override { return {"fake", "simulated", 2, 1, 2, "", "", "failing", 1}; }
    std::vector<runners::Measurement> run(std::span<const runners::MeasureRequest> batch) override {
      runners::Measurement m;
      m.request = batch[0];
      m.outcome = runners::Outcome::timed_out;
      m.detail = "the watchdog aborted the communicator";
      return {m};
    }
  };
  CheckContext c = simulated_context(simulated_job(topology::load_example("h100-8x"), 2));
  c.make_runner = [](const Pass&) { return std::make_unique<Failing>(); };
  const auto r = run_check({}, c);
  CHECK(r.blocks());
  CHECK(r.nodes[1].health.findings.front().kind == "check_failed");
  CHECK(r.nodes[1].health.findings.front().reading.find("timed_out: the watchdog") != std::string::npos);
}

TEST_CASE("health: bad check input is refused before anything is measured", "[check][health]") {
  const measure::RunnerOptions job =
      simulated_job(topology::load_example("h100-8x"), 8, {"node=9,gpu=0,clock=0.5"});
  CHECK_THROWS_WITH(simulated_context(job), Catch::Contains("expected a node below --nodes 8"));
  CheckContext none;
  CHECK_THROWS_AS(run_check({}, none), InputError);
}

TEST_CASE(
    "health: check's JSON: a nodes list with node, status and findings naming devices, read back for tune",
    "[check][health]") {
  const auto r = simulate("h100-8x", 8, {"node=3,nic=1,rate=0.5", "node=5,gpu=2,clock=0.6"});
  const auto j = nlohmann::json::parse(to_json(r));
  CHECK(j["status"] == "block");
  CHECK(j["source"] == "simulated");
  REQUIRE(j["nodes"].size() == 8);
  CHECK(j["nodes"][0]["status"] == "ok");
  CHECK(j["nodes"][3]["node"] == 3);
  CHECK(j["nodes"][3]["status"] == "block");
  CHECK(j["nodes"][3]["findings"][0]["device"] == "mlx5_1");
  CHECK(j["nodes"][5]["findings"][0]["device"] == "GPU2");
  CHECK(j["nodes"][5]["rail_busbw_gbps"].size() == 8);
  CHECK(j["passes"].size() == 7);
  CHECK(j["alltoall_busbw_gbps"].get<double>() > 0.0);
  CHECK(j["nodes"][5]["ring_busbw_gbps"].size() == 8);
  const auto back = read_check_json(to_json(r), "check.json");
  CHECK(back.checked_by == "check (simulated)");
  REQUIRE(back.nodes.size() == 8);
  CHECK(back.nodes[3].findings == r.nodes[3].health.findings);
  CHECK(topology::may_calibrate(back.nodes[0]));
  CHECK_THROWS_WITH(read_check_json("{\"schema\": 1}", "x.json"),
                    Catch::Contains("x.json: expected nccl-autotune check's JSON"));
}

TEST_CASE("health: every node's own probe record reaches every rank of a job, in node order",
          "[check][health]") {
  const auto examples = std::vector<std::string>{"h100-8x", "a100-pcie-8x"};
  std::vector<std::vector<NodeRecord>> seen(4);
  const auto errors = test::run_ranks(
      4,
      [&](int rank, const runners::ProcessGroup& g) {
        int probed = 0;
        seen[rank] = gather_node_records(g, [&] {
          ++probed;
          return NodeRecord{"host" + std::to_string(rank / 2), topology::load_example(examples[rank / 2])};
        });
        CHECK(probed == (rank % 2 == 0 ? 1 : 0));  // only each node's first rank probes
      },
      std::chrono::seconds(10), 2);
  CHECK(errors == std::vector<std::string>(4, ""));
  for (const auto& records : seen) {
    REQUIRE(records.size() == 2);
    CHECK(records[0].host == "host0");
    CHECK(records[1].host == "host1");
    CHECK(records[1].topology.gpus.front().name.find("A100") != std::string::npos);
  }
  // A probe that fails on one node fails every rank the same way instead of leaving them waiting.
  const auto failed = test::run_ranks(
      4,
      [&](int rank, const runners::ProcessGroup& g) {
        gather_node_records(g, [&]() -> NodeRecord {
          if (rank == 2) throw std::runtime_error("no sysfs");
          return {"h", topology::load_example("h100-8x")};
        });
      },
      std::chrono::seconds(10), 2);
  for (const auto& e : failed) CHECK(e.find("node 1: its probe failed: \"no sysfs\"") != std::string::npos);
}
