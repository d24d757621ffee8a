#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>

#include "measure/runner_factory.hpp"
#include "runners/collective_check.hpp"
#include "support/skip.hpp"

using namespace autotune::measure;
using namespace autotune::nccl;
using namespace autotune::runners;

TEST_CASE("Buffer counts follow nccl-tests sizes", "[check]") {
  // 4 KiB = 1024 floats; AllGather/ReduceScatter sizes are the whole buffer.
  auto ar = buffer_counts(Collective::allreduce, 4, 4096);
  CHECK((ar.send == 1024 && ar.recv == 1024 && ar.op_count == 1024));
  auto ag = buffer_counts(Collective::allgather, 4, 4096);
  CHECK((ag.send == 256 && ag.recv == 1024 && ag.op_count == 256));
  auto rs = buffer_counts(Collective::reducescatter, 4, 4096);
  CHECK((rs.send == 1024 && rs.recv == 256 && rs.op_count == 256));
  auto bc = buffer_counts(Collective::broadcast, 4, 4096);
  CHECK((bc.send == 1024 && bc.recv == 1024));
  auto rd = buffer_counts(Collective::reduce, 4, 4096);
  CHECK((rd.send == 1024 && rd.recv == 1024));
  // 8 B over 8 ranks: nothing per rank, as in nccl-tests.
  auto tiny = buffer_counts(Collective::allgather, 8, 8);
  CHECK((tiny.send == 0 && tiny.recv == 0));
}

TEST_CASE("Input values are small integers that depend on rank and index", "[check]") {
  CHECK(input_value(0, 0) == 1.0f);
  CHECK(input_value(1, 0) == 4.0f);   // (0 + 3) % 17 + 0 + 1
  CHECK(input_value(0, 6) == 8.0f);   // 6 % 17 + 6 % 5 + 1
  CHECK(input_value(5, 20) == 2.0f);  // (20 + 15) % 17 + 20 % 5 + 1
  for (int r = 0; r < 40; ++r)
    for (uint64_t i = 0; i < 200; ++i) {
      float v = input_value(r, i);
      REQUIRE(v >= 1.0f);
      REQUIRE(v <= 21.0f);
      REQUIRE(v == std::floor(v));
    }
  // Neighbouring ranks differ everywhere, so a block from the wrong rank is caught.
  for (uint64_t i = 0; i < 100; ++i) CHECK(input_value(2, i) != input_value(3, i));
}

TEST_CASE("AllReduce expects the exact element-wise sum on every rank", "[check]") {
  const int n = 3;
  auto in0 = make_input(Collective::allreduce, n, 0, 64);
  REQUIRE(in0.size() == 16);
  for (int rank = 0; rank < n; ++rank) {
    auto e = expected_output(Collective::allreduce, n, rank, 64);
    REQUIRE(e);
    REQUIRE(e->size() == 16);
    CHECK((*e)[0] == 1.0f + 4.0f + 7.0f);
    for (size_t i = 0; i < 16; ++i)
      CHECK((*e)[i] == input_value(0, i) + input_value(1, i) + input_value(2, i));
  }
}

TEST_CASE("Sums stay exact in float for many ranks", "[check]") {
  const int n = 5000;
  auto e = expected_output(Collective::allreduce, n, 0, 16 * 4);
  REQUIRE(e);
  for (uint64_t i = 0; i < 16; ++i) {
    double exact = 0;
    for (int r = 0; r < n; ++r) exact += input_value(r, i);
    CHECK(static_cast<double>((*e)[i]) == exact);
  }
}

TEST_CASE("AllGather expects every rank's input concatenated in rank order", "[check]") {
  const int n = 4;
  auto e = expected_output(Collective::allgather, n, 2, 4 * 4 * 3);  // 3 floats per rank
  REQUIRE(e);
  REQUIRE(e->size() == 12);
  for (int r = 0; r < n; ++r) {
    auto in = make_input(Collective::allgather, n, r, 48);
    REQUIRE(in.size() == 3);
    for (size_t i = 0; i < 3; ++i) CHECK((*e)[r * 3 + i] == in[i]);
  }
}

TEST_CASE("ReduceScatter expects this rank's block of the sum", "[check]") {
  const int n = 2;
  // 8 floats in all: each rank sends 8 and receives 4.
  auto in0 = make_input(Collective::reducescatter, n, 0, 32);
  auto in1 = make_input(Collective::reducescatter, n, 1, 32);
  REQUIRE(in0.size() == 8);
  auto e1 = expected_output(Collective::reducescatter, n, 1, 32);
  REQUIRE(e1);
  REQUIRE(e1->size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK((*e1)[i] == in0[4 + i] + in1[4 + i]);
  auto e0 = expected_output(Collective::reducescatter, n, 0, 32);
  for (size_t i = 0; i < 4; ++i) CHECK((*e0)[i] == in0[i] + in1[i]);
  CHECK(*e0 != *e1);
}

TEST_CASE("Broadcast expects the root's input, Reduce only on the root", "[check]") {
  auto root_in = make_input(Collective::broadcast, 4, kCheckRoot, 40);
  for (int rank = 0; rank < 4; ++rank) {
    auto e = expected_output(Collective::broadcast, 4, rank, 40);
    REQUIRE(e);
    CHECK(*e == root_in);
  }
  auto root = expected_output(Collective::reduce, 4, 0, 40);
  REQUIRE(root);
  CHECK((*root)[0] == 1.0f + 4.0f + 7.0f + 10.0f);
  CHECK_FALSE(expected_output(Collective::reduce, 4, 1, 40));
  CHECK_THROWS_AS(expected_output(Collective::reduce, 4, 4, 40), std::invalid_argument);
  CHECK_THROWS_AS(expected_output(Collective::allreduce, 0, 0, 40), std::invalid_argument);
}

TEST_CASE("The comparison is exact and catches unwritten (NaN) and stale data", "[check]") {
  auto e = *expected_output(Collective::allreduce, 2, 0, 4 * 100);
  auto found = e;
  CHECK(compare_exact(e, found).ok());
  CHECK(compare_exact(e, found).describe() == "all 100 elements right");

  found[17] += 1.0f;
  found[60] = 0.0f;
  auto r = compare_exact(e, found);
  CHECK_FALSE(r.ok());
  CHECK(r.wrong == 2);
  CHECK(r.first_index == 17);
  CHECK(r.describe() == "2 of 100 elements wrong; first at [17]: expected " +
                            std::to_string(static_cast<int>(e[17])) + ", found " +
                            std::to_string(static_cast<int>(e[17]) + 1));

  std::vector<float> nan(100, std::numeric_limits<float>::quiet_NaN());
  CHECK(compare_exact(e, nan).wrong == 100);
  // One rank's input where the sum belongs (a protocol that delivered only the local part).
  CHECK(compare_exact(e, make_input(Collective::allreduce, 2, 0, 400)).wrong == 100);
  CHECK_THROWS_AS(compare_exact(e, std::vector<float>(99)), std::invalid_argument);
}

TEST_CASE("Without a GPU the NCCL runner says so instead of crashing", "[nccl]") {
  if (std::filesystem::exists("/dev/nvidia0")) {
    AUTOTUNE_SKIP("a GPU is present: the no-device path is checked on machines without one");
  }
  // The NCCL runner module is found beside the plugin, as the command finds it.
  REQUIRE(setenv("NCCL_AUTOTUNE_PLUGIN_DIR", AUTOTUNE_TEST_PLUGIN_DIR, 1) == 0);
  RunnerOptions options;  // not simulating: the NCCL runner
  try {
    make_runner(options);
    FAIL("make_runner returned a runner without a GPU");
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    INFO(what);
    // A build without CUDA and NCCL has no module and says so; with it, CUDA's own reason.
    const std::string expected = AUTOTUNE_WITH_NCCL_RUNNER ? "no CUDA device: " : "cannot measure on GPUs: ";
    CHECK(what.rfind(expected, 0) == 0);
    CHECK(what.size() > expected.size());
  }
  unsetenv("NCCL_AUTOTUNE_PLUGIN_DIR");
}

TEST_CASE("Point-to-point buffer counts follow nccl-tests sizes", "[check][p2p]") {
  // alltoall_perf -b 4096 on 4 ranks: 1024 floats per rank in all, 256 to each peer.
  auto a2a = buffer_counts(Operation::alltoall, 4, 4096);
  CHECK((a2a.send == 1024 && a2a.recv == 1024 && a2a.op_count == 256));
  // 1000 B on 8 ranks: 250 floats, 31 per peer, rounded down to whole 16-byte units: 28 (nccl-tests' size
  // column prints 8 x 28 x 4 = 896).
  auto odd = buffer_counts(Operation::alltoall, 8, 1000);
  CHECK((odd.op_count == 28 && odd.send == 224 && odd.recv == 224));
  // sendrecv: the size is what each rank sends.
  auto sr = buffer_counts(Operation::sendrecv, 4, 4096);
  CHECK((sr.send == 1024 && sr.recv == 1024 && sr.op_count == 1024));
  auto ga = buffer_counts(Operation::gather, 4, 4096);
  CHECK((ga.send == 256 && ga.recv == 1024 && ga.op_count == 256));
  auto sc = buffer_counts(Operation::scatter, 4, 4096);
  CHECK((sc.send == 1024 && sc.recv == 256 && sc.op_count == 256));
  // The collectives' counts are unchanged through the Operation overload.
  CHECK(buffer_counts(Operation::allgather, 4, 4096).recv == 1024);
}

TEST_CASE("Point-to-point expected outputs follow nccl-tests' checks", "[check][p2p]") {
  // alltoall over 3 ranks, 48 B: 4 floats per peer. Rank 1's block 2 is block 1 of rank 2's input:
  // input_value(2, 4) = (4 + 6) % 17 + 4 % 5 + 1 = 15.
  auto a2a = expected_output(Operation::alltoall, 3, 1, 48);
  REQUIRE(a2a);
  REQUIRE(a2a->size() == 12);
  CHECK((*a2a)[8] == 15.0f);
  CHECK((*a2a)[0] == input_value(0, 4));  // block 0 from rank 0, its elements 4..7
  // sendrecv: rank 0 of 4 receives rank 3's input: (0 + 9) % 17 + 0 + 1 = 10.
  auto sr = expected_output(Operation::sendrecv, 4, 0, 64);
  REQUIRE(sr);
  CHECK(sr->size() == 16);
  CHECK((*sr)[0] == 10.0f);
  CHECK((*expected_output(Operation::sendrecv, 4, 2, 64))[0] == input_value(1, 0));
  // gather: only the root is defined; its block 2 is rank 2's whole input.
  CHECK_FALSE(expected_output(Operation::gather, 4, 1, 256).has_value());
  auto ga = expected_output(Operation::gather, 4, kCheckRoot, 256);
  REQUIRE(ga);
  CHECK((*ga)[2 * 16] == 7.0f);  // input_value(2, 0) = 6 + 0 + 1
  // scatter: rank 2 holds block 2 of the root's input: input_value(0, 32) = 15 + 2 + 1 = 18.
  auto sc = expected_output(Operation::scatter, 4, 2, 256);
  REQUIRE(sc);
  CHECK(sc->size() == 16);
  CHECK((*sc)[0] == 18.0f);
  // A wrong peer is caught: rank 3's data where rank 1's belongs.
  auto wrong = *expected_output(Operation::sendrecv, 4, 2, 64);
  for (uint64_t i = 0; i < wrong.size(); ++i) wrong[i] = input_value(3, i);
  CHECK_FALSE(compare_exact(*expected_output(Operation::sendrecv, 4, 2, 64), wrong).ok());
}
