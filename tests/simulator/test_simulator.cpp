#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "measure/runner_factory.hpp"
#include "runners/bandwidth.hpp"
#include "runners/process_group.hpp"
#include "simulator/sim_model.hpp"
#include "simulator/sim_runner.hpp"
#include "tests/simulator/test_topologies.hpp"
#include "topology/examples.hpp"

using namespace autotune;
using namespace autotune::measure;
using namespace autotune::nccl;
using namespace autotune::runners;
using namespace autotune::sim;

namespace {

using autotune::kGiB;

SimModel h100_model(int nodes = 1, std::map<std::string, std::string> env = {}, SimDeviations dev = {}) {
  return SimModel(describe_cluster(test::h100_node(), nodes), env, dev);
}

std::vector<uint64_t> sizes_8_to_8g() {
  std::vector<uint64_t> s;
  for (uint64_t b = 8; b <= 8 * kGiB; b *= 2) s.push_back(b);
  return s;
}

}  // namespace

TEST_CASE("describe_cluster reads the node's generation, fabric and NICs", "[sim]") {
  SimCluster c = describe_cluster(test::h100_node(), 2);
  CHECK(c.sm == 90);
  CHECK(c.generation() == 2);
  CHECK(c.gpus_per_node == 8);
  CHECK(c.ranks() == 16);
  CHECK(c.nvlink);
  CHECK(c.nvswitch);
  CHECK(c.nvls);
  CHECK(c.intra_gbps == Approx(18 * 20.6));
  CHECK(c.nics.size() == 8);
  CHECK(c.net_gbps() == Approx(8 * 48.0));

  SimCluster p = describe_cluster(test::a100_pcie_node(), 1);
  CHECK_FALSE(p.nvlink);
  CHECK_FALSE(p.nvls);
  CHECK_FALSE(p.ll128_safe());
  CHECK(p.intra_gbps < 32.0);

  topology::Topology empty;
  empty.origin = "x.xml";
  CHECK_THROWS_AS(describe_cluster(empty, 1), InputError);
  CHECK_THROWS_AS(describe_cluster(test::h100_node(), 0), InputError);
}

TEST_CASE("NCCL's default on one 8x H100 node: Ring LL for the smallest sizes, NVLS for 1 GiB", "[sim]") {
  SimModel m = h100_model();
  SimChoice small = m.nccl_default(Collective::allreduce, 8);
  CHECK(small.algorithm == Algorithm::ring);
  CHECK(small.protocol == Protocol::ll);
  SimChoice big = m.nccl_default(Collective::allreduce, kGiB);
  CHECK(big.algorithm == Algorithm::nvls);
  CHECK(big.protocol == Protocol::simple);
  CHECK(big.channels == 16);  // NCCL's NVLS channels (comm->nvlsChannels), not the ring's 24
  // Without NVSwitch-backed NVLS (NCCL_NVLS_ENABLE=0) the big sizes go to Ring/Simple.
  SimModel no_nvls = h100_model(1, {{"NCCL_NVLS_ENABLE", "0"}});
  CHECK(no_nvls.nccl_default(Collective::allreduce, kGiB).algorithm == Algorithm::ring);
  // The truth without deviations agrees with NCCL at the small end.
  SimModel exact = h100_model(1, {}, SimDeviations{.enabled = false});
  CHECK(exact.best_true(Collective::allreduce, 8).algorithm == Algorithm::ring);
  CHECK(exact.best_true(Collective::allreduce, 8).protocol == Protocol::ll);
}

TEST_CASE("The landscape has crossovers: the protocol changes from LL to Simple over the size range",
          "[sim]") {
  SimModel m = h100_model(2);
  Protocol first = m.nccl_default(Collective::allreduce, 8).protocol;
  Protocol last = m.nccl_default(Collective::allreduce, 8 * kGiB).protocol;
  CHECK(first == Protocol::ll);
  CHECK(last == Protocol::simple);
  // Ring beats Tree at one size and loses at another, or NVLSTree takes over: more than one algorithm wins.
  std::set<Algorithm> winners;
  for (uint64_t b : sizes_8_to_8g()) winners.insert(m.nccl_default(Collective::allreduce, b).algorithm);
  CHECK(winners.size() >= 2);
}

TEST_CASE("The truth differs from NCCL's choice somewhere, by a seeded and configurable amount", "[sim]") {
  SimModel m = h100_model(2);
  int differs = 0;
  double best_gain = 1.0;
  for (Collective c : nccl::kAllCollectives)
    for (uint64_t b : sizes_8_to_8g()) {
      SimChoice d = m.nccl_default(c, b), t = m.best_true(c, b);
      if (!(d == t)) {
        ++differs;
        best_gain = std::max(best_gain, m.true_time_us(c, b, d) / m.true_time_us(c, b, t));
      }
    }
  CHECK(differs > 5);
  CHECK(best_gain > 1.05);
  // Up to 2.4x here: NCCL's own model (2.29's tables) takes LL128 for 0.5-2 MiB Reduce on two nodes where
  // this seed's truth runs LL128 slow; more would be a deviation out of bounds.
  CHECK(best_gain < 2.5);
  // Without deviations the truth is the fitted hardware model: NCCL's latencies, checked against figures
  // computed by hand from NCCL's constant tables, and the bandwidths of public nccl-tests numbers
  // (NCCL-FACTS.md; all published points in tests/fidelity), not the code's own estimate:
  SimModel exact = h100_model(1, {}, SimDeviations{.enabled = false});
  // an 8-byte Ring/LL AllReduce on 8 GPUs is the base latency 6.6 us plus 2(n-1) = 14 NVLink hops of 0.6 us;
  CHECK(exact.true_time_us(Collective::allreduce, 8, SimChoice{Algorithm::ring, Protocol::ll, 32}) ==
        Approx(6.6 + 14 * 0.6).margin(0.05));
  // Tree/LL: 6.8 us plus 2 x (8 - 1) intra-node hops of 0.6 us;
  CHECK(exact.true_time_us(Collective::allreduce, 8, SimChoice{Algorithm::tree, Protocol::ll, 32}) ==
        Approx(6.8 + 2 * 7 * 0.6).margin(0.05));
  // one H100 node reaches 365-370 GB/s busbw with Ring and 475-480 GB/s with NVLS at large sizes.
  auto busbw = [&](Algorithm a) {
    return busbw_gbps(
        Collective::allreduce, 8, 8 * kGiB,
        exact.true_time_us(Collective::allreduce, 8 * kGiB, SimChoice{a, Protocol::simple, 32}));
  };
  CHECK(busbw(Algorithm::ring) == Approx(367.5).epsilon(0.03));
  CHECK(busbw(Algorithm::nvls) == Approx(477.5).epsilon(0.03));
  // Another deviation seed is another machine.
  SimModel other = h100_model(2, {}, SimDeviations{.seed = 7});
  SimChoice r{Algorithm::ring, Protocol::simple, 32};
  CHECK(other.true_time_us(Collective::allreduce, kGiB, r) != m.true_time_us(Collective::allreduce, kGiB, r));
}

TEST_CASE("Bigger messages never get slower in algbw within one candidate", "[sim]") {
  SimModel m = h100_model(2);
  for (Collective c : nccl::kAllCollectives)
    for (Algorithm a : nccl::kAllAlgorithms)
      for (Protocol p : nccl::kAllProtocols) {
        if (m.unsupported(c, a, p)) continue;
        for (int ch : {1, 8, 32}) {
          double prev = 0.0;
          for (uint64_t b : sizes_8_to_8g()) {
            double bw = algbw_gbps(b, m.true_time_us(c, b, SimChoice{a, p, ch}));
            INFO(nccl::name(c) << " " << nccl::name(a) << "/" << nccl::name(p) << " ch" << ch << " " << b);
            CHECK(bw >= prev);
            prev = bw;
          }
        }
      }
}

TEST_CASE("NVLS needs NVSwitches, CollNet needs SHARP NICs and NCCL_COLLNET_ENABLE, PAT one GPU per node",
          "[sim]") {
  SimModel pcie(describe_cluster(test::a100_pcie_node(), 2));
  CHECK(pcie.unsupported(Collective::allreduce, Algorithm::nvls, Protocol::simple));
  CHECK(pcie.unsupported(Collective::allreduce, Algorithm::collnet_direct, Protocol::simple));
  CHECK(pcie.unsupported(Collective::allgather, Algorithm::pat, Protocol::simple));
  CHECK(pcie.unsupported(Collective::broadcast, Algorithm::tree, Protocol::simple));
  CHECK_FALSE(pcie.unsupported(Collective::allreduce, Algorithm::ring, Protocol::ll128));
  CHECK(pcie.corrupts(Algorithm::ring, Protocol::ll128));
  // NCCL's own choice never picks LL128 where it is unsafe.
  for (uint64_t b : sizes_8_to_8g())
    CHECK(pcie.nccl_default(Collective::allreduce, b).protocol != Protocol::ll128);

  SimModel one_node = h100_model(1);
  CHECK(one_node.unsupported(Collective::allreduce, Algorithm::nvls_tree, Protocol::simple));
  CHECK_FALSE(one_node.unsupported(Collective::allreduce, Algorithm::nvls, Protocol::simple));

  SimCluster sharp = describe_cluster(test::h100_node(8, true), 4);
  // The reason names what is missing, not a condition that holds (the report and explain print it).
  auto reason = [](const SimModel& m, Algorithm a) {
    return m.unsupported(Collective::allreduce, a, Protocol::simple).value_or("(supported)");
  };
  CHECK_THAT(reason(SimModel(describe_cluster(test::h100_node(), 1)), Algorithm::collnet_direct),
             Catch::Contains("SHARP-capable NICs"));
  CHECK_THAT(
      reason(SimModel(shape_cluster(describe_cluster(test::h100_node(), 4), 1, true)), Algorithm::nvls),
      Catch::Contains("more than one GPU per node"));
  CHECK_THAT(reason(pcie, Algorithm::nvls), Catch::Contains("sm 80"));
  CHECK_THAT(reason(SimModel(sharp, {{"NCCL_COLLNET_ENABLE", "1"}}), Algorithm::nvls_tree),
             Catch::Equals("(supported)"));
  CHECK(SimModel(sharp).unsupported(Collective::allreduce, Algorithm::collnet_direct, Protocol::simple));
  CHECK_FALSE(SimModel(sharp, {{"NCCL_COLLNET_ENABLE", "1"}})
                  .unsupported(Collective::allreduce, Algorithm::collnet_direct, Protocol::simple));

  topology::Topology single = test::h100_node();
  single.gpus.resize(1);
  SimModel pat(describe_cluster(single, 4));
  CHECK_FALSE(pat.unsupported(Collective::allgather, Algorithm::pat, Protocol::simple));
}

TEST_CASE("Process settings: fewer NICs in NCCL_IB_HCA cost inter-node bandwidth, CROSS_NIC a little",
          "[sim]") {
  SimModel all = h100_model(2);
  SimModel half = h100_model(2, {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1,mlx5_2,mlx5_3"}});
  SimModel excl = h100_model(2, {{"NCCL_IB_HCA", "^mlx5_7"}});
  CHECK(half.cluster().nics.size() == 4);
  CHECK(excl.cluster().nics.size() == 7);
  CHECK(half.effective_net_gbps() < 0.5 * all.effective_net_gbps());  // half the NICs and a rail mismatch
  CHECK(excl.effective_net_gbps() < all.effective_net_gbps());
  SimChoice ring{Algorithm::ring, Protocol::simple, 32};
  CHECK(half.true_time_us(Collective::allreduce, kGiB, ring) >
        all.true_time_us(Collective::allreduce, kGiB, ring));
  // One node never touches the network.
  CHECK(h100_model(1, {{"NCCL_IB_HCA", "mlx5_0"}}).true_time_us(Collective::allreduce, kGiB, ring) ==
        h100_model(1).true_time_us(Collective::allreduce, kGiB, ring));
  double cross0 = h100_model(2, {{"NCCL_CROSS_NIC", "0"}}).effective_net_gbps();
  double cross1 = h100_model(2, {{"NCCL_CROSS_NIC", "1"}}).effective_net_gbps();
  CHECK(cross0 != cross1);
  CHECK(std::fabs(cross0 / all.effective_net_gbps() - 1.0) <= 0.03);
  CHECK_THROWS_AS(h100_model(2, {{"NCCL_CROSS_NIC", "5"}}), InputError);
  CHECK_THROWS_AS(h100_model(2, {{"NCCL_IB_HCA", "^"}}), InputError);
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO leave NCCL, its cost table and a tuner's forcing only what they select",
          "[sim]") {
  const SimModel ring = h100_model(1, {{"NCCL_ALGO", "ring"}});
  CHECK(h100_model().nccl_default(Collective::allreduce, kGiB).algorithm == Algorithm::nvls);
  CHECK(ring.nccl_default(Collective::allreduce, kGiB).algorithm == Algorithm::ring);
  const auto why = ring.unsupported(Collective::allreduce, Algorithm::nvls, Protocol::simple);
  REQUIRE(why);
  CHECK(why->find("NCCL_ALGO=Ring") != std::string::npos);
  CHECK(ring.cost_table(Collective::allreduce, kGiB)[static_cast<size_t>(Algorithm::nvls) * kNumProtocols +
                                                     static_cast<size_t>(Protocol::simple)] < 0.0f);
  Candidate nvls;
  nvls.algorithm = Algorithm::nvls;
  std::string reason;
  CHECK_FALSE(ring.resolve(Collective::allreduce, kGiB, nvls, &reason));
  CHECK(reason.find("NCCL_ALGO") != std::string::npos);
  // Per collective, as NCCL reads it: all-reduce on NVLS, everything else left alone.
  const SimModel per = h100_model(1, {{"NCCL_ALGO", "allreduce:nvls"}});
  CHECK(per.nccl_default(Collective::allreduce, 8).algorithm == Algorithm::nvls);
  CHECK_FALSE(per.unsupported(Collective::allgather, Algorithm::ring, Protocol::simple));
  // NCCL_PROTO=^LL takes LL from the small sizes; naming LL128 turns it on where NCCL would not.
  CHECK(h100_model(1, {{"NCCL_PROTO", "^LL"}}).nccl_default(Collective::allreduce, 8).protocol !=
        Protocol::ll);
  SimModel pcie(describe_cluster(test::a100_pcie_node(), 1), {{"NCCL_PROTO", "LL128"}});
  CHECK(pcie.nccl_default(Collective::allreduce, kGiB).protocol == Protocol::ll128);
  CHECK_THROWS_AS(h100_model(1, {{"NCCL_ALGO", "fastest"}}), InputError);
}

TEST_CASE("NCCL_IB_HCA selects NICs and ports in the simulator exactly as NCCL reads it", "[sim]") {
  // Two dual-port NICs: mlx5_0 and mlx5_10 (a prefix trap for "mlx5_1"), and mlx5_1.
  topology::Topology node = test::h100_node();
  node.nics.resize(3);
  const char* names[] = {"mlx5_0", "mlx5_1", "mlx5_10"};
  for (int i = 0; i < 3; ++i) {
    node.nics[i].name = names[i];
    node.nics[i].ports.resize(2);
    for (int p = 0; p < 2; ++p) node.nics[i].ports[p].port = p + 1, node.nics[i].ports[p].speed_gbps = 400.0;
  }
  auto kept = [&](const std::string& value) {
    std::vector<std::string> out;
    const SimModel model(describe_cluster(node, 2), {{"NCCL_IB_HCA", value}});
    for (const auto& n : model.cluster().nics)
      for (const auto& p : n.ports) out.push_back(n.name + ":" + std::to_string(p.port));
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(kept("mlx5_1") == V{"mlx5_1:1", "mlx5_1:2", "mlx5_10:1", "mlx5_10:2"});  // a prefix
  CHECK(kept("=mlx5_1") == V{"mlx5_1:1", "mlx5_1:2"});                           // exact
  CHECK(kept("=mlx5_1:2") == V{"mlx5_1:2"});                                     // one port
  CHECK(kept("mlx5_0:1,mlx5_1:2") == V{"mlx5_0:1", "mlx5_1:2", "mlx5_10:2"});
  CHECK(kept("^=mlx5_0:1") == V{"mlx5_0:2", "mlx5_1:1", "mlx5_1:2", "mlx5_10:1", "mlx5_10:2"});
  CHECK(kept("^mlx5_1") == V{"mlx5_0:1", "mlx5_0:2"});
  // Ports carry bandwidth: one port of one NIC is a quarter of two dual-port NICs.
  SimModel one(describe_cluster(node, 2), {{"NCCL_IB_HCA", "=mlx5_0:1"}});
  SimModel two(describe_cluster(node, 2), {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}});
  CHECK(one.cluster().net_gbps() == Approx(two.cluster().net_gbps() / 4));
  // The value's syntax is NCCL's: refused the way the profile validator refuses it.
  CHECK_THROWS_WITH(SimModel(describe_cluster(node, 2), {{"NCCL_IB_HCA", "mlx5_0:x"}}),
                    Catch::Contains("NCCL_IB_HCA"));
}

TEST_CASE("Groups of a shape that run at once share their nodes' NICs as their rails allow", "[sim]") {
  // Four nodes, one rank per node (a data-parallel group): alone, and all eight such groups at once.
  auto dp = [](const topology::Topology& node, bool concurrent) {
    return SimModel(shape_cluster(describe_cluster(node, 4), 1, concurrent), {},
                    SimDeviations{.enabled = false});
  };
  const SimChoice ring{Algorithm::ring, Protocol::simple, 16};
  auto time = [&](const SimModel& m) { return m.true_time_us(Collective::allreduce, kGiB, ring); };
  // Eight rail NICs: each group has its own, so eight at once are no slower than one.
  const auto rails = topology::load_example("h100-8x");
  CHECK(dp(rails, true).cluster().groups_per_node == 8);
  CHECK(dp(rails, true).effective_net_gbps() == Approx(dp(rails, false).effective_net_gbps()));
  CHECK(time(dp(rails, true)) == Approx(time(dp(rails, false))));
  // Two NICs: four groups share each, a quarter of the bandwidth each; alone, a group has one NIC to itself.
  const auto two = topology::load_example("h100-8x-2nic");
  CHECK(dp(two, true).effective_net_gbps() == Approx(dp(two, false).effective_net_gbps() / 4));
  CHECK(time(dp(two, true)) > 3.0 * time(dp(two, false)));
  // The whole node in one communicator uses every NIC, as before.
  SimModel whole(describe_cluster(rails, 4), {}, SimDeviations{.enabled = false});
  CHECK(whole.effective_net_gbps() == Approx(8 * 48.0).epsilon(0.01));
  // A shape whose ranks per node do not divide the node is refused.
  CHECK_THROWS_AS(shape_cluster(describe_cluster(rails, 4), 3, true), InputError);
}

TEST_CASE("The simulator runner: labelled, seeded, repeatable, failures as values", "[sim]") {
  RunnerOptions o;
  o.simulate = true;
  o.topology = test::a100_pcie_node();
  o.nodes = 1;
  auto runner = make_runner(o);
  RunnerInfo info = runner->info();
  CHECK(info.source == "simulated");
  CHECK(info.kind == "simulator");
  CHECK(info.description.find("SIMULATED") == 0);
  CHECK(info.ranks == 8);

  std::vector<MeasureRequest> batch(4);
  batch[0].bytes = 1 << 20;
  batch[1].bytes = 1 << 20;
  batch[1].candidate.algorithm = Algorithm::nvls;
  batch[2].bytes = 1 << 20;
  batch[2].candidate.algorithm = Algorithm::ring;
  batch[2].candidate.protocol = Protocol::ll128;
  batch[3].bytes = 1 << 20;
  batch[3].candidate.algorithm = Algorithm::ring;
  batch[3].candidate.protocol = Protocol::simple;
  batch[3].candidate.channels = 2;
  auto out = runner->run(batch);
  REQUIRE(out.size() == 4);
  CHECK(out[0].outcome == Outcome::ok);
  CHECK(out[0].times_us.size() == 5);
  CHECK(out[0].mean_times_us.size() == 5);
  for (size_t k = 0; k < 5; ++k) CHECK(out[0].mean_times_us[k] <= out[0].times_us[k]);
  CHECK(out[0].busbw_gbps == Approx(out[0].algbw_gbps * 2 * 7 / 8.0));
  CHECK(out[0].used_algorithm.has_value());
  CHECK(out[1].outcome == Outcome::unsupported);
  CHECK_FALSE(out[1].detail.empty());
  CHECK(out[2].outcome == Outcome::wrong_result);
  CHECK(out[3].outcome == Outcome::ok);
  CHECK(out[3].used_channels == 2);

  // Same seed, same numbers; a repeat of a request gets fresh noise; another seed other numbers.
  auto again = make_runner(o)->run(batch);
  CHECK(again[0].times_us == out[0].times_us);
  auto repeat = runner->run(batch);
  CHECK(repeat[0].times_us != out[0].times_us);
  o.seed = 2;
  CHECK(make_runner(o)->run(batch)[0].times_us != out[0].times_us);
  // Noise stays near the configured level.
  double rel = std::fabs(out[0].times_us[0] / out[0].times_us[1] - 1.0);
  CHECK(rel < 0.3);
  o.noise = 0.0;
  auto quiet = make_runner(o)->run(batch);
  CHECK(quiet[0].times_us[0] == quiet[0].times_us[1]);
}

TEST_CASE("make_runner rejects options that cannot work", "[sim]") {
  RunnerOptions o;
  o.simulate = true;
  CHECK_THROWS_AS(make_runner(o), InputError);  // no topology
  o.topology = test::h100_node();
  o.nodes = 0;
  CHECK_THROWS_AS(make_runner(o), InputError);
  o.nodes = 1;
  o.noise = -1;
  CHECK_THROWS_AS(make_runner(o), InputError);
}

TEST_CASE("nccl-tests' bandwidth definitions", "[bandwidth]") {
  CHECK(algbw_gbps(1000000000, 1e6) == Approx(1.0));
  CHECK(algbw_gbps(1 << 20, 0.0) == 0.0);
  CHECK(busbw_gbps(Collective::allreduce, 8, 1000000000, 1e6) == Approx(1.75));
  CHECK(busbw_gbps(Collective::allgather, 8, 1000000000, 1e6) == Approx(0.875));
  CHECK(busbw_gbps(Collective::reducescatter, 4, 1000000000, 1e6) == Approx(0.75));
  CHECK(busbw_gbps(Collective::broadcast, 8, 1000000000, 1e6) == Approx(1.0));
  CHECK(busbw_gbps(Collective::reduce, 8, 1000000000, 1e6) == Approx(1.0));
  CHECK(element_count(Collective::allreduce, 8, 1024) == 256);
  CHECK(element_count(Collective::allgather, 8, 1024) == 32);
}

TEST_CASE("nccl-tests' bandwidth definitions for point-to-point operations", "[bandwidth][p2p]") {
  // alltoall_perf on 8 GPUs: 1 GiB in 4550 us is algbw 235.99 GB/s, busbw x 7/8 = 206.49 GB/s.
  CHECK(algbw_gbps(1073741824, 4550.0) == Approx(235.99).margin(0.005));
  CHECK(busbw_gbps(Operation::alltoall, 8, 1073741824, 4550.0) == Approx(206.49).margin(0.005));
  CHECK(busbw_gbps(Operation::gather, 4, 1000000000, 1e6) == Approx(0.75));
  CHECK(busbw_gbps(Operation::scatter, 2, 1000000000, 1e6) == Approx(0.5));
  // sendrecv: busbw = algbw whatever the ranks.
  CHECK(busbw_gbps(Operation::sendrecv, 16, 1000000000, 1e6) == Approx(1.0));
  CHECK(busbw_gbps(Operation::allreduce, 8, 1000000000, 1e6) == Approx(1.75));
  // Counts per peer, rounded down to 16-byte units; sendrecv's is the whole size.
  CHECK(element_count(Operation::alltoall, 8, 1024) == 32);
  CHECK(element_count(Operation::alltoall, 8, 1000) == 28);
  CHECK(element_count(Operation::sendrecv, 8, 1000) == 250);
}

TEST_CASE("The simulator runner measures point-to-point operations with nccl-tests' bandwidths",
          "[sim][p2p]") {
  RunnerOptions o;
  o.simulate = true;
  o.topology = test::h100_node();
  o.nodes = 2;
  auto runner = make_runner(o);
  std::vector<MeasureRequest> batch(3);
  batch[0].set_operation(Operation::alltoall);
  batch[1].set_operation(Operation::sendrecv);
  batch[2].set_operation(Operation::alltoall);
  for (auto& r : batch) r.bytes = 64 << 20;
  batch[2].candidate.algorithm = Algorithm::ring;  // nothing can be forced for point-to-point
  auto out = runner->run(batch);
  REQUIRE(out[0].outcome == Outcome::ok);
  CHECK(out[0].request.operation() == Operation::alltoall);
  CHECK(out[0].busbw_gbps == Approx(out[0].algbw_gbps * 15 / 16));
  CHECK_FALSE(out[0].used_algorithm.has_value());
  REQUIRE(out[1].outcome == Outcome::ok);
  CHECK(out[1].busbw_gbps == Approx(out[1].algbw_gbps));
  CHECK(out[2].outcome == Outcome::unsupported);
  CHECK(out[2].detail.find("NCCL's tuner never sees point-to-point") != std::string::npos);
  // The network paces an all-to-all across nodes: half of each rank's data leaves the node over its rail's
  // 48 GB/s NIC, so algbw stays below 2 x 48 GB/s; inside one node NVLink carries it all, far faster.
  CHECK(out[0].algbw_gbps < 2 * 48.0);
  CHECK(out[0].algbw_gbps > 48.0);
  SimModel one = h100_model(1);
  CHECK(one.p2p_time_us(Operation::alltoall, 64 << 20) <
        h100_model(2).p2p_time_us(Operation::alltoall, 64 << 20));
}

TEST_CASE("Point-to-point settings change the simulated point-to-point traffic as NCCL reads them",
          "[sim][p2p]") {
  const uint64_t big = 256 << 20, mid = 1 << 20;
  SimModel base = h100_model(4);
  // PXN off: traffic to other rails leaves through the sender's own NIC and crosses the spine.
  CHECK(h100_model(4, {{"NCCL_PXN_DISABLE", "1"}}).p2p_time_us(Operation::alltoall, big) >
        1.1 * base.p2p_time_us(Operation::alltoall, big));
  CHECK(h100_model(4, {{"NCCL_P2P_PXN_LEVEL", "0"}}).p2p_time_us(Operation::alltoall, big) ==
        h100_model(4, {{"NCCL_PXN_DISABLE", "1"}}).p2p_time_us(Operation::alltoall, big));
  // More queue pairs win back part of what crossing the spine costs.
  CHECK(h100_model(4, {{"NCCL_PXN_DISABLE", "1"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}})
            .p2p_time_us(Operation::alltoall, big) <
        h100_model(4, {{"NCCL_PXN_DISABLE", "1"}}).p2p_time_us(Operation::alltoall, big));
  // A 4 KiB network chunk: 8 chunks in flight per channel cannot cover the round trip.
  CHECK(h100_model(4, {{"NCCL_P2P_NET_CHUNKSIZE", "4096"}}).p2p_time_us(Operation::sendrecv, big) >
        2 * base.p2p_time_us(Operation::sendrecv, big));
  // The NVLink chunk matters on one node only; NCCL_BUFFSIZE cuts the chunk to an eighth of it.
  CHECK(h100_model(4, {{"NCCL_P2P_NVL_CHUNKSIZE", "4096"}}).p2p_time_us(Operation::alltoall, mid) ==
        base.p2p_time_us(Operation::alltoall, mid));
  CHECK(p2p_chunk_bytes(h100_model(1).cluster(), read_p2p_settings({{"NCCL_BUFFSIZE", "1048576"}})) ==
        131072);
  CHECK(p2p_chunk_bytes(base.cluster(), P2pSettings{}) == 131072);
  // GPUDirect off (GDR level below the NIC's PIX): the network carries less, collectives across nodes slow
  // too where it paces them (two NICs for eight GPUs).
  SimModel no_gdr = h100_model(4, {{"NCCL_NET_GDR_LEVEL", "LOC"}});
  CHECK(no_gdr.effective_net_gbps() == Approx(base.effective_net_gbps() * kNoGdrShare));
  const std::map<std::string, std::string> two_nics = {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}};
  auto with_gdr_off = two_nics;
  with_gdr_off["NCCL_NET_GDR_LEVEL"] = "LOC";
  SimChoice ring{Algorithm::ring, Protocol::simple, 32};
  CHECK(h100_model(4, with_gdr_off).true_time_us(Collective::allreduce, big, ring) >
        1.1 * h100_model(4, two_nics).true_time_us(Collective::allreduce, big, ring));
  CHECK(no_gdr.p2p_time_us(Operation::alltoall, big) > base.p2p_time_us(Operation::alltoall, big));
  // Values NCCL would not take are refused as the profile's [env] refuses them.
  CHECK_THROWS_AS(h100_model(2, {{"NCCL_PXN_DISABLE", "2"}}), InputError);
  CHECK_THROWS_AS(h100_model(2, {{"NCCL_P2P_NET_CHUNKSIZE", "100"}}), InputError);
  CHECK_THROWS_AS(h100_model(2, {{"NCCL_NET_GDR_LEVEL", "NET"}}), InputError);
}

TEST_CASE("describe_cluster refuses what it would have to guess and says what it assumed", "[sim]") {
  // A GPU nothing says the architecture of: no SM, a name and device id the simulator does not know.
  topology::Topology unknown = test::h100_node();
  for (auto& g : unknown.gpus) g.sm = 0, g.name = "Mystery Accelerator";
  CHECK_THROWS_WITH(describe_cluster(unknown, 1),
                    Catch::Contains("a GPU whose architecture the simulator knows") &&
                        Catch::Contains("'Mystery Accelerator'"));
  // More than one node and no NIC with an active port: nothing to model the network with.
  topology::Topology no_nics = test::h100_node();
  no_nics.nics.clear();
  CHECK_NOTHROW(describe_cluster(no_nics, 1));
  CHECK_THROWS_WITH(describe_cluster(no_nics, 2),
                    Catch::Contains("at least one NIC that has an active port"));
  topology::Topology ports_down = test::h100_node();
  for (auto& n : ports_down.nics) n.ports[0].state = "DOWN";
  CHECK_THROWS_AS(describe_cluster(ports_down, 2), InputError);
  // H100s with no NVLink listed (a skeleton file): PCIe only, and said so, also in what the runner reports.
  topology::Topology no_nvlink = test::h100_node();
  for (auto& g : no_nvlink.gpus) g.nvlinks.clear();
  no_nvlink.nvswitches.clear();
  SimCluster c = describe_cluster(no_nvlink, 1);
  CHECK_FALSE(c.nvlink);
  REQUIRE(c.assumptions.size() == 1);
  CHECK_THAT(c.assumptions[0], Catch::Contains("no NVLink listed for the 8"));
  const runners::SingleProcess alone;
  SimRunner runner(SimModel(c), 1, 0.03, alone);
  CHECK_THAT(runner.info().description, Catch::Contains("ASSUMED: no NVLink listed"));
  // A node whose GPUs say they are PCIe cards assumes nothing.
  CHECK(describe_cluster(test::a100_pcie_node(), 1).assumptions.empty());
  CHECK(describe_cluster(test::h100_node(), 2).assumptions.empty());
}
