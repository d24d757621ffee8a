// The nccl-tests log parser on logs written in the formats of nccl-tests 2.10, 2.13, 2.17 and 2.19.
#include <catch2/catch.hpp>
#include <string>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "nccl_tests/nccl_tests_log.hpp"
#include "tests/nccl_tests/fixture_path.hpp"

using namespace autotune;
using namespace autotune::nccl_tests;
using autotune::nccl_tests::test::fixture;

namespace {
bool has_warning(const NcclTestsLog& log, const std::string& needle) {
  for (const auto& w : log.warnings)
    if (w.text.find(needle) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("nccl-tests 2.10 all_reduce_perf: old error column, one process with 8 GPUs") {
  auto log = read_nccl_tests_log(fixture("all_reduce_perf_v2.10.log"));
  CHECK(log.collective == "allreduce");
  CHECK(log.nccl_collective() == nccl::Collective::allreduce);
  CHECK(log.header.old_error_column);
  CHECK(log.header.threads == 1);
  CHECK(log.header.gpus_per_thread == 8);
  CHECK(log.header.min_bytes == 8);
  CHECK(log.header.max_bytes == 134217728);
  CHECK(log.header.step == 4);
  CHECK(log.header.step_is_factor);
  CHECK(log.header.validation == 1);
  REQUIRE(log.header.ranks.size() == 8);
  CHECK(log.header.ranks[3].host == "dgx-a100-01");
  CHECK(log.header.ranks[3].device == 3);
  CHECK(log.header.ranks[3].bus_id == "0x4e");
  CHECK(log.header.ranks[3].gpu_name == "A100-SXM4-80GB");
  CHECK(log.ranks() == 8);
  CHECK(log.hosts() == 1);
  // 8 B to 128 MiB by factors of 4: 13 sizes.
  REQUIRE(log.rows.size() == 13);
  CHECK(log.rows.front().bytes == 8);
  CHECK(log.rows.front().count == 2);
  CHECK(log.rows.front().type == "float");
  CHECK(log.rows.front().redop == "sum");
  CHECK(log.rows.back().bytes == 134217728);
  // A float delta of 2e-07 is within nccl-tests' tolerance (1e-5 x 7 ranks): not wrong.
  CHECK(log.rows.back().out_of_place.check == Approx(2e-7));
  CHECK_FALSE(log.rows.back().wrong());
  // busbw = algbw x 2(n-1)/n, as printed.
  const auto& big = log.rows.back().out_of_place;
  CHECK(big.busbw_gbps == Approx(big.algbw_gbps * 1.75).epsilon(0.01));
  CHECK(big.algbw_gbps == Approx(134217728 / big.time_us / 1e3).epsilon(0.01));
  CHECK_FALSE(log.truncated);
  REQUIRE(log.footer.out_of_bounds);
  CHECK(*log.footer.out_of_bounds == 0);
  REQUIRE(log.footer.avg_busbw_gbps);
  CHECK(*log.footer.avg_busbw_gbps > 0);
  CHECK(log.warnings.empty());
}

TEST_CASE("nccl-tests 2.10 broadcast_perf: root column and validation off (N/A)") {
  auto log = read_nccl_tests_log(fixture("broadcast_perf_v2.10.log"));
  CHECK(log.collective == "broadcast");
  CHECK(log.header.validation == 0);
  REQUIRE(log.rows.size() == 6);
  CHECK(log.rows[0].root == 0);
  CHECK(log.rows[0].redop.empty());
  CHECK_FALSE(log.rows[0].in_place.check.has_value());
  CHECK_FALSE(log.rows[0].wrong());
}

TEST_CASE("nccl-tests 2.13 all_gather_perf under mpirun with NCCL_DEBUG=INFO interleaved") {
  auto log = read_nccl_tests_log(fixture("all_gather_perf_v2.13_mpi_noisy.log"));
  CHECK(log.collective == "allgather");
  CHECK_FALSE(log.header.old_error_column);
  CHECK(log.ranks() == 16);
  CHECK(log.hosts() == 2);
  CHECK(log.nccl_nodes == 2);
  CHECK(log.nccl_version == "2.18.3");
  CHECK(log.env_algo == "Ring");
  CHECK(log.env_proto == "Simple");
  // 16 KiB to 256 MiB by 4: 8 sizes, the second one split by NCCL's connection lines and joined again.
  REQUIRE(log.rows.size() == 8);
  CHECK(log.rows[1].bytes == 65536);
  CHECK(log.rows[1].count == 1024);
  CHECK(log.rows[1].in_place.time_us == Approx(41.46));
  CHECK(log.rows[1].line == 38);
  CHECK(log.rows[2].bytes == 262144);
  CHECK(log.rows[0].redop == "none");
  CHECK(log.rows[0].root == -1);
  CHECK_FALSE(log.truncated);
  CHECK(log.warnings.empty());
}

TEST_CASE("nccl-tests 2.19 reduce_scatter_perf: the program line names the collective, not the file") {
  auto log = read_nccl_tests_log(fixture("h200_rs.log"));
  CHECK(log.collective == "reducescatter");
  CHECK(log.header.program == "reduce_scatter_perf");
  CHECK(log.header.tests_version == "2.19.6");
  CHECK(log.header.nccl_library == 22809);
  REQUIRE(log.header.ranks.size() == 8);
  CHECK(log.header.ranks[0].bus_id == "0000:18:00");
  CHECK(log.header.ranks[0].gpu_name == "NVIDIA H200");
  REQUIRE(log.rows.size() == 7);
  // The size is the whole buffer, the count per rank.
  CHECK(log.rows[0].bytes == 1024);
  CHECK(log.rows[0].count == 32);
  CHECK(log.rows.back().bytes == 268435456);
  CHECK_FALSE(log.truncated);
  CHECK(log.warnings.empty());
}

TEST_CASE("nccl-tests 2.17 reduce_perf: rows with wrong results are kept and flagged") {
  auto log = read_nccl_tests_log(fixture("reduce_perf_v2.17_wrong.log"));
  CHECK(log.collective == "reduce");
  CHECK(log.env_proto == "LL128");
  REQUIRE(log.rows.size() == 7);
  int wrong = 0;
  for (const auto& r : log.rows) {
    if (r.wrong()) {
      ++wrong;
      CHECK((r.bytes == 262144 || r.bytes == 4194304));
    }
  }
  CHECK(wrong == 2);
  CHECK(log.footer.out_of_bounds == 2);
  CHECK(has_warning(log, "2 rows have wrong results"));
}

TEST_CASE("alltoall_perf and sendrecv_perf parse but are not NCCL tuner collectives") {
  auto a2a = read_nccl_tests_log(fixture("alltoall_perf_v2.19.log"));
  CHECK(a2a.collective == "alltoall");
  CHECK_FALSE(a2a.nccl_collective().has_value());
  CHECK(a2a.rows.size() == 6);
  auto sr = read_nccl_tests_log(fixture("sendrecv_perf_v2.13.log"));
  CHECK(sr.collective == "sendrecv");
  CHECK(sr.ranks() == 2);
  CHECK(sr.rows.size() == 6);
}

TEST_CASE("a log cut mid-table keeps its complete rows and says it was truncated") {
  auto log = read_nccl_tests_log(fixture("all_reduce_perf_truncated.log"));
  CHECK(log.collective == "allreduce");
  CHECK(log.ranks() == 16);
  CHECK(log.hosts() == 2);
  CHECK(log.env_algo == "Tree");
  CHECK(log.env_proto == "LL");
  CHECK(log.truncated);
  REQUIRE(log.rows.size() == 13);
  CHECK(log.rows.back().bytes == 32768);
  CHECK(has_warning(log, "incomplete"));
  CHECK(has_warning(log, "truncated"));
}

TEST_CASE("a log cut before its first row is an input error naming the file and line") {
  try {
    read_nccl_tests_log(fixture("all_reduce_perf_cut_before_rows.log"));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == fixture("all_reduce_perf_cut_before_rows.log"));
    CHECK(e.line() == 18);  // its last line
    CHECK(e.message().find("before the first result row") != std::string::npos);
  }
}

TEST_CASE("text that is not nccl-tests output is an input error") {
  try {
    read_nccl_tests_log(fixture("ib_write_bw.log"));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.line() == 1);
    CHECK(e.message().find("expected nccl-tests output") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_nccl_tests_log("", "empty.log"), InputError);
}

TEST_CASE("a table header whose in-place half lacks its algbw, busbw and check is an input error") {
  // Found by fuzz_nccl_tests_log: rows were read at the header's column positions, past a row's end.
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
      "#       size   count  type  redop   time  algbw  busbw  error   time\n"
      "           8       2 float    sum   9.10   0.00   0.00  0e+00   9.00\n";
  try {
    parse_nccl_tests_log(text, "short-header.log", "allreduce");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
    CHECK(e.message().find("expected an nccl-tests table header") != std::string::npos);
  }
}

TEST_CASE("the collective: explicit name first, then program line, file name, then the table's shape") {
  std::string text = read_file(fixture("all_reduce_perf_v2.10.log"));
  CHECK(parse_nccl_tests_log(text, "x.log").collective == "allreduce");  // old table: redop, count = size / 4
  CHECK(parse_nccl_tests_log(text, "x.log", "AllReduce").collective == "allreduce");
  CHECK_THROWS_AS(parse_nccl_tests_log(text, "x.log", "hypercube"), InputError);
  // A new-format table without its program line cannot tell allgather from alltoall.
  std::string a2a = read_file(fixture("alltoall_perf_v2.19.log"));
  for (const char* named : {"# Collective test starting", "# Collective test concluded"}) {
    auto cut = a2a.find(named);
    a2a.erase(cut, a2a.find('\n', cut) - cut + 1);
  }
  CHECK_THROWS_WITH(parse_nccl_tests_log(a2a, "unnamed.log"), Catch::Contains("--collective"));
  CHECK(parse_nccl_tests_log(a2a, "alltoall_perf.log").collective == "alltoall");
}

TEST_CASE("an old error delta above nccl-tests' tolerance marks the row wrong") {
  std::string text = read_file(fixture("all_reduce_perf_v2.10.log"));
  auto at = text.find("2e-07");
  text.replace(at, 5, "3e-01");
  auto log = parse_nccl_tests_log(text, "all_reduce_perf.log");
  int wrong = 0;
  for (const auto& r : log.rows) wrong += r.wrong();
  CHECK(wrong == 1);
}

TEST_CASE("collective names from programs and spellings") {
  CHECK(nccl_tests_collective_name("reduce_scatter_perf") == "reducescatter");
  CHECK(nccl_tests_collective_name("all_reduce_perf") == "allreduce");
  CHECK(nccl_tests_collective_name("reduce_perf") == "reduce");
  CHECK(nccl_tests_collective_name("ReduceScatter") == "reducescatter");
  // gather_perf and scatter_perf, not taken for the collectives whose names hold theirs.
  CHECK(nccl_tests_collective_name("gather_perf") == "gather");
  CHECK(nccl_tests_collective_name("scatter_perf") == "scatter");
  CHECK(nccl_tests_collective_name("all_gather_perf") == "allgather");
  CHECK(nccl_tests_collective_name("ReduceScatter") == "reducescatter");
  CHECK_FALSE(nccl_tests_collective_name("hypercube_perf").has_value());
}
