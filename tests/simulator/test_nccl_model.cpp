// NCCL's search, tuning tables and channel counts as the simulator models them (simulator/nccl_search.hpp,
// simulator/nccl_tuning.hpp), against figures real NCCL 2.29.7 logs for the bundled examples
// (NCCL_DEBUG_SUBSYS=INIT,GRAPH: "Pattern 4, ... nChannels 12, bw 30.000000/30.000000, type NVL/PIX",
// "24 coll channels", "channel{0..21}") and figures computed by hand from each release's tuning.cc.
#include <catch2/catch.hpp>

#include <cmath>

#include "simulator/nccl_estimate.hpp"
#include "simulator/nccl_search.hpp"
#include "simulator/nccl_tuning.hpp"
#include "simulator/sim_cluster.hpp"
#include "topology/examples.hpp"

using namespace autotune;
using namespace autotune::nccl;
using namespace autotune::sim;

namespace {

SimCluster example(const char* name, int nodes = 1) {
  return describe_cluster(topology::load_example(name), nodes);
}

}  // namespace

TEST_CASE("NCCL's search on h100-8x: 12 rings and trees at 30 GB/s over NVLink, 24 channels", "[sim]") {
  const SimCluster c = example("h100-8x");
  const NcclSearch s = search_graphs(c);
  CHECK(s.ring.channels == 12);
  CHECK(s.ring.bw_intra == 30.0);
  CHECK(s.ring.nvlink);
  CHECK(s.tree.channels == 12);
  CHECK(s.tree.bw_intra == 30.0);
  CHECK(s.comm_channels == 24);
  CHECK(c.max_channels == 24);
}

TEST_CASE("NCCL's search on a100-pcie-8x: one ring at 15 GB/s across the sockets' link, 2 channels",
          "[sim]") {
  const SimCluster c = example("a100-pcie-8x");
  CHECK(c.nccl_pci_gbps == 24.0);  // Gen4 x16
  CHECK(c.nccl_cpu_gbps == 16.0);  // AMD_BW
  const NcclSearch s = search_graphs(c);
  CHECK(s.ring.channels == 1);
  CHECK(s.ring.bw_intra == 15.0);
  CHECK_FALSE(s.ring.nvlink);
  CHECK(s.comm_channels == 2);
}

TEST_CASE("NCCL's tables differ by release: Tree/Simple latency 2.22 against 2.29", "[sim]") {
  const SimCluster c = example("h100-8x");
  const NcclSearch s = search_graphs(c);
  const int ar = static_cast<int>(Collective::allreduce), tree = static_cast<int>(Algorithm::tree);
  const int simple = static_cast<int>(Protocol::simple);
  // 2.22: base 0 + 2 x 7 hops x 28 us; 2.29: base 8.4 + 2 x 7 x 4 us.
  CHECK(tune_model(c, s, NcclRelease::v2_22).latency[ar][tree][simple] == Approx(392.0));
  CHECK(tune_model(c, s, NcclRelease::v2_29).latency[ar][tree][simple] == Approx(64.4));
  // Ring/Simple AllReduce: 12 channels x 30 GB/s, x 8/14 to algorithm bandwidth.
  const int ring = static_cast<int>(Algorithm::ring);
  CHECK(tune_model(c, s, NcclRelease::v2_29).bandwidth[ar][ring][simple] == Approx(360.0 * 8 / 14));
  CHECK(parse_nccl_release("2.22.3") == NcclRelease::v2_22);
  CHECK(parse_nccl_release("2.29.7") == NcclRelease::v2_29);
  CHECK_FALSE(parse_nccl_release("2.18.1"));
}

TEST_CASE("NCCL's channels per collective: fewer for small messages, the planner's spread for the rest",
          "[sim]") {
  const SimCluster c = example("h100-8x");
  const NcclTuning t = tune_model(c, search_graphs(c), NcclRelease::v2_29);
  // Ring/LL: one channel per 512 threads x 8 x 8 ranks = 32 KiB.
  CHECK(enqueue_channels(t, Algorithm::ring, Protocol::ll, 16384) == 1);
  CHECK(enqueue_channels(t, Algorithm::ring, Protocol::ll, 65536) == 2);
  CHECK(enqueue_channels(t, Algorithm::ring, Protocol::simple, 8ULL << 20) == 24);
  // 2 MiB Broadcast: 64 cells of 32 KiB, 3 per channel of 24 -> 22 channels (NCCL: channel{0..21}).
  CHECK(planned_channels(t, Collective::broadcast, Algorithm::ring, Protocol::simple, 2 << 20, 8) == 22);
  CHECK(planned_channels(t, Collective::broadcast, Algorithm::ring, Protocol::ll, 1 << 20, 8) == 22);
  CHECK(planned_channels(t, Collective::broadcast, Algorithm::ring, Protocol::ll, 16384, 8) == 1);
  // Less than a byte per rank: no division by zero, NCCL's channel count.
  CHECK(planned_channels(t, Collective::allgather, Algorithm::ring, Protocol::ll, 4, 8) == 1);
}

TEST_CASE("The model's default choice follows NCCL's table: Broadcast takes Simple from 2 MiB on h100-8x",
          "[sim]") {
  SimCluster c = example("h100-8x");
  c.nvls = false;
  const NcclEstimate e(c, 0.0);
  CHECK(e.default_choice(Collective::broadcast, 1 << 20).protocol == Protocol::ll);
  const SimChoice big = e.default_choice(Collective::broadcast, 2 << 20);
  CHECK(big.protocol == Protocol::simple);
  CHECK(big.channels == 22);
  // Forced LL128 on PCIe, which NCCL never takes itself, still gets NCCL's estimate.
  const NcclEstimate pcie(example("a100-pcie-8x"), 0.0);
  CHECK(pcie.default_choice(Collective::allreduce, 1 << 20).protocol != Protocol::ll128);
  CHECK(std::isfinite(pcie.estimate_us(Collective::allreduce, 1 << 20, Algorithm::ring, Protocol::ll128)));
}
