// The simulated truth held to published measurements: every point of simulator/published/points.csv (each
// row names its public source: nccl-tests issues 175, 212, 290; NCCL issues 812, 1221, 1455;
// Azure/AI-benchmarking-guide), simulated as the source ran it, the table printed, the median and worst
// error asserted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>

#include "common/input_error.hpp"
#include "runners/bandwidth.hpp"
#include "runners/process_group.hpp"
#include "simulator/fidelity.hpp"
#include "simulator/sim_runner.hpp"
#include "topology/examples.hpp"

using namespace autotune;
using namespace autotune::sim;

TEST_CASE("the simulator is within 3% (median) and 8% (worst) of every published figure", "[fidelity]") {
  const auto rows = fidelity_rows(published_points());
  std::cout << format_fidelity(rows);
  const FidelitySummary s = summarize(rows);
  CHECK(s.points >= 30);
  CHECK(s.median_abs_error <= 0.03);
  CHECK(s.worst_abs_error <= 0.08);
}

namespace {

constexpr uint64_t kMiB = 1ULL << 20, kGiB = 1ULL << 30;

SimModel model_of(const char* example, int nodes, std::map<std::string, std::string> env = {}) {
  return SimModel(describe_cluster(topology::load_example(example), nodes), env);
}

double busbw(const SimModel& m, nccl::Collective c, uint64_t bytes, const SimChoice& ch) {
  return runners::busbw_gbps(c, m.cluster().ranks(), bytes, m.true_time_us(c, bytes, ch));
}

std::vector<uint64_t> sizes_to_16g() {
  std::vector<uint64_t> s;
  for (uint64_t b = 8; b <= 16 * kGiB; b *= 4) s.push_back(b);
  return s;
}

}  // namespace

TEST_CASE("no simulated figure is above what NVLink and the NICs carry, in nccl-tests' busbw", "[fidelity]") {
  // Line rates from the datasheets, not from the model: NVLink4 18 x 25 GB/s per GPU and direction, one
  // 400 Gb/s NIC per GPU (h100-8x); NVLink3 12 x 25 and one 200 Gb/s NIC per GPU (a100-8x). A ring moves
  // busbw over every GPU's links and every node's NICs; NVLS, trees and CollNet move less than the busbw
  // convention assumes, but never more than the message once per GPU and node: line x 2(n-1)/n.
  struct Machine {
    const char* example;
    double nvlink, nics;
  };
  for (const Machine& mc : {Machine{"h100-8x", 450.0, 400.0}, Machine{"a100-8x", 300.0, 200.0}})
    for (int nodes : {1, 2, 4}) {
      const SimModel m = model_of(mc.example, nodes);
      for (nccl::Collective c : nccl::kAllCollectives)
        for (nccl::Algorithm a : nccl::kAllAlgorithms)
          for (nccl::Protocol p : nccl::kAllProtocols) {
            if (m.unsupported(c, a, p) || m.corrupts(a, p)) continue;
            const int n = m.cluster().ranks();
            const bool ring_like = c != nccl::Collective::allreduce || a == nccl::Algorithm::ring;
            double cap = ring_like ? mc.nvlink : mc.nvlink * 2.0 * (n - 1) / n;
            if (nodes > 1) cap = std::min(cap, ring_like ? mc.nics : mc.nics * 2.0 * (n - 1) / n);
            for (uint64_t b : sizes_to_16g()) {
              INFO(mc.example << " x" << nodes << " " << nccl::nccl_name(c) << " " << nccl::nccl_name(a)
                              << "/" << nccl::nccl_name(p) << " " << b);
              CHECK(busbw(m, c, b, SimChoice{a, p, m.cluster().max_channels}) <= cap);
            }
          }
    }
}

TEST_CASE("a tree on two nodes shows more busbw than the NICs' line rate, as on real DGX A100s",
          "[fidelity]") {
  // nccl-tests issue 196, NCCL issue 812: busbw counts 2(n-1)/n of the message per rank, a tree on two
  // nodes sends it across once per direction. A ring stays under the line rate (8 x 25 GB/s).
  const SimModel m = model_of("a100-8x", 2);
  const int ch = m.cluster().max_channels;
  const auto ar = nccl::Collective::allreduce;
  CHECK(busbw(m, ar, 8 * kGiB, SimChoice{nccl::Algorithm::tree, nccl::Protocol::simple, ch}) > 200.0);
  CHECK(busbw(m, ar, 8 * kGiB, SimChoice{nccl::Algorithm::ring, nccl::Protocol::simple, ch}) < 200.0);
  // On four nodes the tree no longer beats the NICs.
  const SimModel four = model_of("a100-8x", 4);
  CHECK(busbw(four, ar, 8 * kGiB, SimChoice{nccl::Algorithm::tree, nccl::Protocol::simple, ch}) < 200.0);
}

TEST_CASE("NCCL_NVLS_ENABLE=0 turns NVLS off in the simulator as in NCCL", "[fidelity]") {
  const SimModel on = model_of("h100-8x", 1), off = model_of("h100-8x", 1, {{"NCCL_NVLS_ENABLE", "0"}});
  CHECK(on.nccl_default(nccl::Collective::allreduce, 8 * kGiB).algorithm == nccl::Algorithm::nvls);
  CHECK(off.nccl_default(nccl::Collective::allreduce, 8 * kGiB).algorithm != nccl::Algorithm::nvls);
  CHECK(off.unsupported(nccl::Collective::allreduce, nccl::Algorithm::nvls, nccl::Protocol::simple));
  const SimModel two_off = model_of("h100-8x", 2, {{"NCCL_NVLS_ENABLE", "0"}});
  CHECK(two_off.unsupported(nccl::Collective::allreduce, nccl::Algorithm::nvls_tree, nccl::Protocol::simple));
}

TEST_CASE("NCCL's own choice gives smooth curves: no dip where it switches algorithm", "[fidelity]") {
  // Real 8x H100 curves rise smoothly from 32 MiB on (nccl-tests issue 212: 256 MiB is still short of the
  // NVLS peak); a dip would be the model's, not the hardware's.
  for (const char* example : {"h100-8x", "h200-8x", "a100-8x"}) {
    const SimModel m = model_of(example, 1);
    for (nccl::Collective c :
         {nccl::Collective::allreduce, nccl::Collective::allgather, nccl::Collective::reducescatter}) {
      double prev = 0.0;
      for (uint64_t b = 32 * kMiB; b <= 16 * kGiB; b *= 2) {
        const double bw = busbw(m, c, b, m.nccl_default(c, b));
        INFO(example << " " << nccl::nccl_name(c) << " " << b);
        CHECK(bw >= 0.99 * prev);
        prev = std::max(prev, bw);
      }
    }
    if (std::string(example) == "h100-8x") {
      const auto ar = nccl::Collective::allreduce;
      CHECK(busbw(m, ar, 256 * kMiB, m.nccl_default(ar, 256 * kMiB)) <
            0.95 * busbw(m, ar, 16 * kGiB, m.nccl_default(ar, 16 * kGiB)));
    }
  }
}

TEST_CASE("the published points file is read strictly", "[fidelity]") {
  const std::string header = "machine,nodes,gpus,collective,bytes,algorithm,env,busbw_gbps,source\n";
  const auto points = parse_published_points(
      "# comment\n" + header + "h100-8x,2,8,allreduce,8G,ring,NCCL_NVLS_ENABLE=0,330,issue, with a comma\n",
      "f");
  REQUIRE(points.size() == 1);
  CHECK(points[0].bytes == 8 * kGiB);
  CHECK(points[0].algorithm == nccl::Algorithm::ring);
  CHECK(points[0].env.at("NCCL_NVLS_ENABLE") == "0");
  CHECK(points[0].source == "issue, with a comma");
  CHECK(points[0].line == 3);
  for (const std::string bad : {"h100-8x,0,8,allreduce,8G,,,330,s", "h100-8x,1,8,allsum,8G,,,330,s",
                                "h100-8x,1,8,allreduce,8Q,,,330,s", "h100-8x,1,8,allreduce,8G,fast,,330,s",
                                "h100-8x,1,8,allreduce,8G,,X=1,330,s", "h100-8x,1,8,allreduce,8G,,,-3,s",
                                "h100-8x,1,8,allreduce,8G,,,330,", "h100-8x,1,8"}) {
    INFO(bad);
    try {
      parse_published_points(header + bad + "\n", "points.csv");
      FAIL("expected InputError");
    } catch (const InputError& e) {
      CHECK(e.line() == 2);
    }
  }
  CHECK_THROWS_AS(parse_published_points("h100-8x,1,8,allreduce,8G,,,330,s\n", "f"), InputError);
}

TEST_CASE("bench's footer names the machine's published figures, or says there are none", "[fidelity]") {
  const std::string h200 = format_published_for(topology::load_example("h200-8x"));
  CHECK(h200.find("Azure/AI-benchmarking-guide") != std::string::npos);
  CHECK(h200.find("nccl-tests issue 212") == std::string::npos);  // another machine's
  CHECK(h200.find("5 point(s)") != std::string::npos);
  const std::string pcie = format_published_for(topology::load_example("a100-pcie-8x"));
  CHECK(pcie.find("none for this machine") != std::string::npos);
}

TEST_CASE("run-to-run spread: a few percent inside a node, a heavier tail across nodes", "[fidelity]") {
  // Noise 3% per repetition (nccl-tests runs vary by a few percent); across nodes the fabric is shared and
  // some repetitions run slower still (nccl-tests issue 283: about 350 GB/s, sometimes under 300).
  runners::SingleProcess alone;
  auto spread = [&](int nodes) {
    SimRunner runner(model_of("h100-8x", nodes), 11, 0.03, alone);
    runners::MeasureRequest r;
    r.bytes = 256 * kMiB;
    r.repetitions = 400;
    std::vector<double> t = runner.run(std::span(&r, 1)).front().times_us;
    std::sort(t.begin(), t.end());
    return std::make_pair(t[t.size() / 2], t[t.size() * 99 / 100] / t[t.size() / 2]);
  };
  const auto [median1, tail1] = spread(1);
  const auto [median4, tail4] = spread(4);
  CHECK(tail1 > 1.03);  // noisy at all
  CHECK(tail1 < 1.15);  // but a few percent
  CHECK(tail4 > tail1);
  CHECK(median4 > median1);  // and across nodes slower to begin with
}
