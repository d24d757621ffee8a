// --sim-fault: parsing, validation against the simulated cluster, and what a fault does to the simulated
// truth: it slows only communicators that span the sick node, never NCCL's own estimate.

#include <catch2/catch.hpp>

#include <algorithm>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "measure/runner_factory.hpp"
#include "runners/bandwidth.hpp"
#include "simulator/sim_fault.hpp"
#include "simulator/sim_model.hpp"
#include "simulator/sim_runner.hpp"
#include "tests/simulator/test_topologies.hpp"

using namespace autotune;
using namespace autotune::sim;
using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

namespace {

using autotune::kGiB;

std::string error_of(const std::string& text) {
  try {
    parse_sim_fault(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

SimModel model(int nodes, std::vector<SimFault> faults, std::map<std::string, std::string> env = {},
               std::vector<int> node_ids = {}) {
  SimCluster c = describe_cluster(test::h100_node(), nodes, std::move(faults));
  c.node_ids = std::move(node_ids);
  SimDeviations off;
  off.enabled = false;  // the fitted truth alone, so that a fault's effect is the whole difference
  return SimModel(c, env, off);
}

double busbw_at_1g(const SimModel& m) {
  const SimChoice choice = m.nccl_default(Collective::allreduce, kGiB);
  const double us = m.true_time_us(Collective::allreduce, kGiB, choice);
  const int n = m.cluster().ranks();
  return static_cast<double>(kGiB) / (us * 1000.0) * 2.0 * (n - 1) / n;
}

}  // namespace

TEST_CASE("health: --sim-fault parses the three kinds of fault, keys in any order",
          "[sim][sim-fault][health]") {
  CHECK(parse_sim_fault("node=3,nic=1,rate=0.5") == SimFault{3, SimFault::Kind::nic_rate, 1, 0.5, ""});
  CHECK(parse_sim_fault("gpu=2,node=5,clock=0.6") == SimFault{5, SimFault::Kind::gpu_clock, 2, 0.6, ""});
  CHECK(parse_sim_fault("node=1,gpu=0,nvlink=0.5") == SimFault{1, SimFault::Kind::nvlink, 0, 0.5, ""});
  CHECK(parse_sim_fault("node=0,nic=0,rate=1").fraction == 1.0);
  CHECK(describe_fault(parse_sim_fault("node=5,gpu=2,clock=0.6")) == "node 5: GPU2 clock at 60%");
  const SimFault spine = parse_sim_fault("beyond=128,spine=0.5");
  CHECK(spine.kind == SimFault::Kind::spine);
  CHECK(spine.beyond == 128);
  CHECK(describe_fault(spine) == "spine at 50% of its rate for communicators over more than 128 nodes");
}

TEST_CASE("health: --sim-fault refuses what it cannot mean", "[sim][sim-fault][health]") {
  const std::string forms =
      "node=N,nic=K,rate=F (a NIC at a fraction of its rate), node=N,gpu=K,clock=F (a throttled GPU), "
      "node=N,gpu=K,nvlink=F (NVLinks at a fraction of their bandwidth) or spine=F,beyond=N (the network "
      "between leaf switches, crossed by communicators over more than N nodes), F in (0, 1]";
  CHECK(error_of("node=3,nic=1") == "--sim-fault: expected " + forms + "; found \"node=3,nic=1\"");
  CHECK(error_of("node=3,nic=1,clock=0.5") ==
        "--sim-fault: expected " + forms + "; found \"node=3,nic=1,clock=0.5\"");
  CHECK(error_of("node=3,gpu=1,clock=0.5,rate=0.5").find("expected node=N") != std::string::npos);
  CHECK(error_of("node=3,nic=1,rate=0") ==
        "--sim-fault: expected rate= a fraction in (0, 1] of the healthy value; found \"0\"");
  CHECK(error_of("node=3,nic=1,rate=1.5").find("rate= a fraction in (0, 1]") != std::string::npos);
  CHECK(error_of("node=3,nic=1,rate=half").find("rate= a fraction") != std::string::npos);
  CHECK(error_of("node=-1,nic=1,rate=0.5") == "--sim-fault: expected node= an index 0..65535; found \"-1\"");
  CHECK(error_of("node=1,node=2,nic=1,rate=0.5") ==
        "--sim-fault: expected each key once; found \"node=1,node=2,nic=1,rate=0.5\"");
  CHECK(error_of("node=1,disk=2,rate=0.5").rfind("--sim-fault: expected keys node, nic, gpu", 0) == 0);
  CHECK(error_of("") == "--sim-fault: expected " + forms + "; found \"\"");
  CHECK(error_of("spine=0.5") == "--sim-fault: expected " + forms + "; found \"spine=0.5\"");
  CHECK(error_of("spine=2,beyond=128").find("spine= a fraction in (0, 1]") != std::string::npos);
}

TEST_CASE("health: --sim-fault names a node, NIC and GPU the simulated cluster has",
          "[sim][sim-fault][health]") {
  auto error = [](int nodes, const std::string& fault) {
    try {
      describe_cluster(test::h100_node(), nodes, {parse_sim_fault(fault)});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(4, "node=3,nic=1,rate=0.5").empty());
  CHECK(error(2, "node=3,nic=1,rate=0.5") ==
        "--sim-fault: expected a node below --nodes 2 (nodes count from 0); found node 3: NIC 1 at 50% of "
        "its rate");
  CHECK(error(4, "node=3,nic=8,rate=0.5") ==
        "--sim-fault: expected nic= below 8 (the probed node's NICs, from 0); found node 3: NIC 8 at 50% of "
        "its rate");
  CHECK(error(4, "node=3,gpu=8,clock=0.5") ==
        "--sim-fault: expected gpu= below 8 (GPUs per node); found node 3: GPU8 clock at 50%");
  const SimCluster c = describe_cluster(test::h100_node(), 4, {parse_sim_fault("node=3,nic=1,rate=0.5")});
  REQUIRE(c.faults.size() == 1);
  CHECK(c.faults[0].nic == "mlx5_1");
}

TEST_CASE("health: a NIC at half rate on node 3 halves what crosses node 3, and only that",
          "[sim][sim-fault][health]") {
  const double healthy = busbw_at_1g(model(8, {}));
  const SimModel sick = model(8, {parse_sim_fault("node=3,nic=1,rate=0.5")});
  CHECK(sick.fault_net_factor() == 0.5);
  CHECK(sick.fault_intra_factor() == 1.0);
  // NCCL's estimate does not know: it picks the same algorithm, which then runs slower.
  CHECK(sick.nccl_default(Collective::allreduce, kGiB) ==
        model(8, {}).nccl_default(Collective::allreduce, kGiB));
  // Healthy, the GPUs pace 8 nodes (about 315 GB/s); the sick NIC leaves node 3 half of its 8 x 48 GB/s.
  CHECK(busbw_at_1g(sick) < healthy * 0.65);
  CHECK(busbw_at_1g(sick) <= 0.5 * 8 * 48.0);
  // A communicator of nodes 0-2 and 4-7 does not cross node 3.
  const SimModel around = model(7, {parse_sim_fault("node=3,nic=1,rate=0.5")}, {}, {0, 1, 2, 4, 5, 6, 7});
  CHECK(around.fault_net_factor() == 1.0);
  // Nor does one that leaves the sick NIC out (NCCL_IB_HCA), nor a single node (no network at all).
  CHECK(model(8, {parse_sim_fault("node=3,nic=1,rate=0.5")}, {{"NCCL_IB_HCA", "^=mlx5_1"}})
            .fault_net_factor() == 1.0);
  const SimModel one = model(1, {parse_sim_fault("node=0,nic=1,rate=0.5")});
  CHECK(busbw_at_1g(one) == Approx(busbw_at_1g(model(1, {}))));
}

TEST_CASE("health: a throttled GPU or slow NVLinks slow the node's GPUs, the runner says so",
          "[sim][sim-fault][health]") {
  const SimModel clock = model(8, {parse_sim_fault("node=5,gpu=2,clock=0.6")});
  CHECK(clock.fault_intra_factor() == 0.6);
  CHECK(clock.fault_net_factor() == 0.6);
  CHECK(busbw_at_1g(clock) < busbw_at_1g(model(8, {})) * 0.7);
  const SimModel links = model(1, {parse_sim_fault("node=0,gpu=0,nvlink=0.5")});
  CHECK(links.fault_intra_factor() == 0.5);
  CHECK(busbw_at_1g(links) == Approx(busbw_at_1g(model(1, {})) * 0.5).epsilon(0.01));
  const runners::SingleProcess alone;
  const SimRunner runner(model(8, {parse_sim_fault("node=5,gpu=2,clock=0.6")}), 1, 0.0, alone);
  CHECK(runner.info().description.find("; fault node 5: GPU2 clock at 60%") != std::string::npos);
  CHECK(runner.info().source == "simulated");
}

namespace {

// Every group of `shape` on a simulated 8 x H100 job at once, noise-free: each group's busbw at 1 GiB.
std::vector<double> group_busbw(const std::vector<std::string>& faults, runners::Scale shape,
                                int node_offset = 0, int local_offset = 0) {
  measure::RunnerOptions o;
  o.simulate = true;
  o.topology = test::h100_node();
  o.nodes = 8;
  o.noise = 0.0;
  o.deviations.enabled = false;
  for (const auto& f : faults) o.faults.push_back(parse_sim_fault(f));
  o.shape = shape;
  o.node_offset = node_offset;
  o.local_offset = local_offset;
  auto runner = measure::make_runner(o);
  runners::MeasureRequest r;
  r.bytes = kGiB;
  const auto m = runner->run(std::vector<runners::MeasureRequest>{r}).at(0);
  REQUIRE(m.outcome == runners::Outcome::ok);
  REQUIRE(static_cast<int>(m.group_times_us.size()) == runner->info().groups);
  std::vector<double> out;
  for (double us : m.group_times_us)
    out.push_back(runners::busbw_gbps(r.collective, shape.ranks, r.bytes, us));
  // The measurement is the slowest group's.
  CHECK(*std::max_element(m.group_times_us.begin(), m.group_times_us.end()) == Approx(m.median_us()));
  return out;
}

// The groups (by index) whose bandwidth is below 90% of the best group's.
std::vector<int> slow_groups(const std::vector<double>& busbw) {
  const double best = *std::max_element(busbw.begin(), busbw.end());
  std::vector<int> out;
  for (size_t g = 0; g < busbw.size(); ++g)
    if (busbw[g] < 0.9 * best) out.push_back(static_cast<int>(g));
  return out;
}

}  // namespace

TEST_CASE("health: every group of a shape sees only its own nodes and GPUs, a healthy job's are all equal",
          "[sim][sim-fault][health]") {
  const auto healthy = group_busbw({}, {1, 8});
  CHECK(healthy.size() == 8);
  CHECK(slow_groups(healthy).empty());
  CHECK(*std::min_element(healthy.begin(), healthy.end()) ==
        Approx(*std::max_element(healthy.begin(), healthy.end())));
  CHECK(group_busbw({}, {2, 2}).size() == 32);  // 4 node pairs x 8 rails
  CHECK(slow_groups(group_busbw({}, {2, 2}, 1)).empty());
}

TEST_CASE("health: a throttled GPU slows the one node's group, the two pairs holding it and its rail",
          "[sim][sim-fault][health]") {
  const std::vector<std::string> fault = {"node=5,gpu=2,clock=0.6"};
  const auto node = group_busbw(fault, {1, 8});
  CHECK(slow_groups(node) == std::vector<int>{5});
  CHECK(node[5] == Approx(node[0] * 0.6).epsilon(0.02));
  // Pairs of GPUs: node 5's pairs are groups 20..23; GPU2 is in pair 1 of the first pass, pair 0 (GPUs 1,2)
  // of the second (local offset 1).
  CHECK(slow_groups(group_busbw(fault, {1, 2})) == std::vector<int>{21});
  CHECK(slow_groups(group_busbw(fault, {1, 2}, 0, 1)) == std::vector<int>{20});
  // One rank per node: the GPU's rail between nodes 4 and 5 (node block 2, rail 2), then 5 and 6.
  CHECK(slow_groups(group_busbw(fault, {2, 2})) == std::vector<int>{2 * 8 + 2});
  CHECK(slow_groups(group_busbw(fault, {2, 2}, 1)) == std::vector<int>{2 * 8 + 2});
}

TEST_CASE("health: a NIC at half rate slows only the groups that use it, never a node alone",
          "[sim][sim-fault][health]") {
  const std::vector<std::string> fault = {"node=3,nic=1,rate=0.5"};
  CHECK(slow_groups(group_busbw(fault, {1, 8})).empty());
  CHECK(slow_groups(group_busbw(fault, {1, 2})).empty());
  // Pass one pairs nodes (2, 3): block 1, rail 1; pass two pairs (3, 4): block 1 again from offset 1.
  const auto first = group_busbw(fault, {2, 2}), second = group_busbw(fault, {2, 2}, 1);
  CHECK(slow_groups(first) == std::vector<int>{8 + 1});
  CHECK(slow_groups(second) == std::vector<int>{8 + 1});
  CHECK(first[9] == Approx(first[0] * 0.5).epsilon(0.02));
  // The whole job's communicator crosses it: the NIC paces it all.
  CHECK(group_busbw(fault, {8, 64}).size() == 1);
}

TEST_CASE("health: slow NVLinks slow the groups with more than one of the node's GPUs, not its rail",
          "[sim][sim-fault][health]") {
  const std::vector<std::string> fault = {"node=1,gpu=0,nvlink=0.5"};
  CHECK(slow_groups(group_busbw(fault, {1, 8})) == std::vector<int>{1});
  CHECK(slow_groups(group_busbw(fault, {1, 2})) == std::vector<int>{4});
  CHECK(slow_groups(group_busbw(fault, {1, 2}, 0, 1)) == std::vector<int>{4 + 3});  // GPUs 7 and 0
  CHECK(slow_groups(group_busbw(fault, {2, 2})).empty());
}
