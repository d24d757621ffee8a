// From pass results to findings, on made-up figures: which device a slow group is pinned on, what the
// median and the hardware's figures say, and the probe's figures themselves.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "check/baseline_findings.hpp"
#include "check/baselines.hpp"
#include "topology/examples.hpp"

using namespace autotune;
using namespace autotune::check;

namespace {

// Every group of every pass at `healthy` GB/s, except the groups `slow` says (pass index, group) at
// `fraction` of it.
std::vector<PassResult> results(int nodes, int gpus, double healthy,
                                const std::vector<std::tuple<size_t, int, double>>& slow = {}) {
  std::vector<PassResult> out;
  for (const auto& p : plan_passes(nodes, gpus)) {
    PassResult r{
        p, std::vector<double>(static_cast<size_t>(pass_layout(p, nodes, gpus).groups()), healthy), {}};
    out.push_back(r);
  }
  for (auto [pass, group, fraction] : slow)
    out.at(pass).group_busbw_gbps.at(static_cast<size_t>(group)) *= fraction;
  return out;
}

std::vector<std::vector<topology::HealthFinding>> judge(const std::vector<PassResult>& passes, int nodes,
                                                        int gpus, const HardwareFigures& hw = {}) {
  return baseline_findings(collect_baselines(passes, nodes, gpus),
                           std::vector<HardwareFigures>(static_cast<size_t>(nodes), hw), {}, "check: test");
}

std::vector<std::string> flagged(const std::vector<std::vector<topology::HealthFinding>>& found) {
  std::vector<std::string> out;
  for (size_t n = 0; n < found.size(); ++n)
    for (const auto& f : found[n])
      out.push_back(std::to_string(n) + " " + f.kind + " " + f.device + " " +
                    std::string(topology::severity_name(f.severity)));
  return out;
}

HardwareFigures rails_of(int gpus) {
  HardwareFigures hw;
  for (int l = 0; l < gpus; ++l) hw.rail_nics.push_back({"mlx5_" + std::to_string(l)});
  return hw;
}

}  // namespace

TEST_CASE("health: equal groups flag nothing, a device's figure is the best group it was in",
          "[check][health]") {
  // Pair 1 of node 1 (GPUs 2 and 3: group 1 x 4 + 1) slow in the first pairing only.
  const auto passes = results(4, 8, 100.0, {{1, 5, 0.5}});
  const auto b = collect_baselines(passes, 4, 8);
  CHECK(b.allreduce_median == 100.0);
  CHECK(b.nodes[1].gpu_gbps[2] == 100.0);  // their pairs of the second pairing were fine
  CHECK(b.nodes[1].gpu_gbps[3] == 100.0);
  CHECK(flagged(judge(passes, 4, 8, rails_of(8))).empty());
  CHECK(flagged(judge(results(4, 8, 100.0), 4, 8)).empty());
}

TEST_CASE("health: a GPU slow in both its pairs is named, its slow node and rail are folded in",
          "[check][health]") {
  // Node 1, GPU 6: node pass group 1, pair 3 of the first pairing (group 4 + 3) and pair 2 (GPUs 5, 6) of
  // the second (group 4 + 2), rail 6 between nodes 0-1 (group 6) and 1-2 (group 6).
  const auto found =
      judge(results(4, 8, 100.0, {{0, 1, 0.7}, {1, 4 + 3, 0.7}, {2, 4 + 2, 0.7}, {3, 6, 0.7}, {4, 6, 0.7}}),
            4, 8, rails_of(8));
  CHECK(flagged(found) == std::vector<std::string>{"1 gpu_bandwidth_low GPU6 block"});
  CHECK(found[1][0].reading.find("the node's all-reduce 70.0 GB/s") != std::string::npos);
  CHECK(found[1][0].reading.find("its rail 70.0 GB/s") != std::string::npos);
  CHECK(found[1][0].source == "check: test");
}

TEST_CASE("health: a rail slow with both its partner nodes is its NIC, 85% of the median warns",
          "[check][health]") {
  // Node 2, rail 4: rail pass 0 pairs nodes (2, 3): node block 1, group 8 + 4; pass 1 pairs (1, 2): group 4.
  const auto found = judge(results(4, 8, 100.0, {{3, 8 + 4, 0.85}, {4, 4, 0.85}}), 4, 8, rails_of(8));
  CHECK(flagged(found) == std::vector<std::string>{"2 nic_bandwidth_low mlx5_4 warn"});
  // Two NICs per rail and rails sharing a NIC are one finding per NIC set.
  HardwareFigures shared;
  for (int l = 0; l < 8; ++l) shared.rail_nics.push_back({l < 4 ? "mlx5_0" : "mlx5_1"});
  const auto both =
      judge(results(4, 8, 100.0, {{3, 8 + 4, 0.5}, {4, 4, 0.5}, {3, 8 + 5, 0.5}, {4, 5, 0.5}}), 4, 8, shared);
  CHECK(flagged(both) == std::vector<std::string>{"2 nic_bandwidth_low mlx5_1 block"});
}

TEST_CASE("health: a slow node that no GPU explains is the node, two nodes name both ends of a rail",
          "[check][health]") {
  CHECK(flagged(judge(results(4, 8, 100.0, {{0, 3, 0.6}}), 4, 8)) ==
        std::vector<std::string>{"3 node_allreduce_low node block"});
  const auto two = judge(results(2, 8, 100.0, {{3, 2, 0.5}}), 2, 8, rails_of(8));
  CHECK(flagged(two) ==
        std::vector<std::string>{"0 nic_bandwidth_low mlx5_2 block", "1 nic_bandwidth_low mlx5_2 block"});
  CHECK(two[0][0].message.find("cannot tell which node") != std::string::npos);
}

TEST_CASE("health: below what the probe says the hardware can do warns, even when every node is",
          "[check][health]") {
  HardwareFigures hw = rails_of(8);
  hw.intra_gbps = 400.0;
  hw.rail_gbps.assign(8, 50.0);
  const auto found = judge(results(2, 8, 20.0), 2, 8, hw);  // 20 of 400 inside, 20 of 50 on every rail
  REQUIRE(found[0].size() == 1 + 8);
  CHECK(found[0][0].kind == "allreduce_below_hardware");
  CHECK(found[0][0].severity == topology::Severity::warn);
  CHECK(found[0][1].kind == "rail_below_hardware");
  CHECK(found[0][1].reading == "rail 0 20.0 GB/s, 40% of its share of the port rate (50.0 GB/s)");
  CHECK(flagged(judge(results(2, 8, 45.0), 2, 8, hw)).size() == 2);  // the rails are fine at 90%
}

TEST_CASE("health: the probe's figures: a ring over the NVLink links, NICs by PCIe nearness, shared rails",
          "[check][health]") {
  const auto rails = hardware_figures(topology::load_example("h100-8x"), 8);
  // A ring over 18 NVLink4 links of 25 GB/s reaches 370 GB/s (nccl-tests issue 212); an NDR NIC 48 of 50.
  CHECK(rails.intra_gbps == Approx(0.82 * 18 * 25.0));
  CHECK(rails.rail_gbps == std::vector<double>(8, 0.96 * 50.0));
  CHECK(rails.rail_nics[3] == std::vector<std::string>{"mlx5_3"});
  const auto two = hardware_figures(topology::load_example("h100-8x-2nic"), 8);
  CHECK(two.rail_gbps[0] == Approx(0.96 * 12.5));  // one 400 Gb/s NIC for four rails
  CHECK(two.rail_nics[0] == std::vector<std::string>{"mlx5_0"});
  CHECK(two.rail_nics[7] == std::vector<std::string>{"mlx5_1"});
  const auto pcie = hardware_figures(topology::load_example("a100-pcie-8x"), 8);
  CHECK(pcie.intra_gbps > 20.0);
  CHECK(pcie.intra_gbps < 32.0);  // a Gen4 x16 link
}

TEST_CASE("health: docs/health.md lists every kind check reports, with its thresholds", "[check][health]") {
  std::ifstream in(std::string(AUTOTUNE_SOURCE_DIR) + "/docs/health.md");
  std::stringstream doc;
  doc << in.rdbuf();
  for (const auto& k : check_kinds()) {
    INFO(k.kind);
    CHECK(doc.str().find("| `" + std::string(k.kind) + "` | " + std::string(k.severity) + " | " +
                         std::string(k.threshold) + " |") != std::string::npos);
  }
}

TEST_CASE(
    "health: a rail slow only in its send/recv ring names its NICs on every node, and the all-to-all figure",
    "[check][health]") {
  // 4 x 8: passes node, two GPU pairings, two rail pairings, all-to-all (5), rings (6, group = rail).
  const auto passes = results(4, 8, 100.0, {{5, 0, 0.9}, {6, 3, 0.7}});
  const auto b = collect_baselines(passes, 4, 8);
  CHECK(b.alltoall_gbps == 90.0);
  CHECK(b.ring_median == 100.0);
  CHECK(b.nodes[2].ring_gbps[3] == 70.0);
  const auto found = judge(passes, 4, 8, rails_of(8));
  CHECK(flagged(found) ==
        std::vector<std::string>{"0 nic_ring_low mlx5_3 block", "1 nic_ring_low mlx5_3 block",
                                 "2 nic_ring_low mlx5_3 block", "3 nic_ring_low mlx5_3 block"});
  CHECK(found[0][0].reading.find("rail 3 send/recv ring across every node 70.0 GB/s") != std::string::npos);
  // The same ring slow beside a slow pair of nodes on that rail is the pair's NIC, found already.
  CHECK(flagged(judge(results(4, 8, 100.0, {{3, 8 + 3, 0.7}, {4, 3, 0.7}, {6, 3, 0.7}}), 4, 8,
                      rails_of(8))) == std::vector<std::string>{"2 nic_bandwidth_low mlx5_3 block"});
}
