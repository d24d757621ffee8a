#include <catch2/catch.hpp>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "nccl_tests/bench_table.hpp"
#include "nccl_tests/import_nccl_tests.hpp"
#include "nccl_tests/nccl_tests_file.hpp"
#include "runners/bandwidth.hpp"

using namespace autotune;
using namespace autotune::nccl_tests;
using namespace autotune::runners;
using nccl::Collective;

TEST_CASE("nccl-tests' size syntax and sweep", "[bench]") {
  // -b and -e take sizes as every other option does (common/byte_size.hpp).
  CHECK(require_byte_size("8", "-b") == 8);
  CHECK(require_byte_size("64K", "-b") == 65536);
  CHECK(require_byte_size("1m", "-b") == 1048576);
  CHECK(require_byte_size("8G", "-e") == 8ULL << 30);
  CHECK_THROWS_WITH(require_byte_size("8X", "-e"),
                    Catch::Contains("-e: expected a size such as 8, 64K, 1M or 8G, found '8X'"));
  CHECK_THROWS_AS(require_byte_size("", "-b"), InputError);
  CHECK_THROWS_AS(require_byte_size("G", "-b"), InputError);
  auto s = size_sweep(8, 8ULL << 30, 2);
  CHECK(s.size() == 31);
  CHECK(s.front() == 8);
  CHECK(s.back() == 8ULL << 30);
  CHECK(size_sweep(8, 100, 4) == std::vector<uint64_t>{8, 32});
  CHECK_THROWS_AS(size_sweep(0, 8, 2), InputError);
  CHECK_THROWS_AS(size_sweep(16, 8, 2), InputError);
  CHECK_THROWS_AS(size_sweep(8, 16, 1), InputError);
}

namespace {

Measurement measurement(Collective c, uint64_t bytes, double time_us, int ranks) {
  Measurement m;
  m.request.collective = c;
  m.request.bytes = bytes;
  m.request.candidate.algorithm = nccl::Algorithm::ring;
  m.request.candidate.protocol = nccl::Protocol::ll;
  m.times_us = {time_us * 1.01, time_us, time_us * 0.99};
  m.mean_times_us = m.times_us;
  m.algbw_gbps = algbw_gbps(bytes, time_us);
  m.busbw_gbps = busbw_gbps(c, ranks, bytes, time_us);
  m.used_algorithm = nccl::Algorithm::ring;
  m.used_protocol = nccl::Protocol::ll;
  m.used_channels = 2;
  return m;
}

RunnerInfo info_of(const char* source) {
  RunnerInfo info;
  info.kind = "simulator";
  info.source = source;
  info.description = "test runner";
  info.ranks = 8;
  info.nodes = 1;
  info.gpus_per_node = 8;
  info.nccl_version = "2.28.9";
  return info;
}

// Allreduce at 1 KiB (ok), 8 KiB (in-place wrong), 64 KiB (both halves unsupported), then Reduce at 1 KiB.
std::vector<BenchRow> sample_rows() {
  std::vector<BenchRow> rows;
  rows.push_back(
      {measurement(Collective::allreduce, 1024, 10.0, 8), measurement(Collective::allreduce, 1024, 10.5, 8)});
  rows.push_back(
      {measurement(Collective::allreduce, 8192, 12.0, 8), measurement(Collective::allreduce, 8192, 12.2, 8)});
  rows.back().in_place.outcome = Outcome::wrong_result;
  rows.back().in_place.detail = "rank 3: 5 of 2048 elements wrong";
  BenchRow unsupported{measurement(Collective::allreduce, 65536, 1, 8),
                       measurement(Collective::allreduce, 65536, 1, 8)};
  for (Measurement* m : {&unsupported.out_of_place, &unsupported.in_place}) {
    Measurement fresh;
    fresh.request = m->request;
    *m = fresh;
    m->outcome = Outcome::unsupported;
    m->detail = "NCCL marked ring/ll unusable";
  }
  rows.push_back(unsupported);
  rows.push_back(
      {measurement(Collective::reduce, 1024, 9.0, 8), measurement(Collective::reduce, 1024, 9.5, 8)});
  rows.back().in_place.used_protocol = nccl::Protocol::simple;
  return rows;
}

}  // namespace

TEST_CASE("bench's table is nccl-tests' table, test by test, and says simulated loudly", "[bench]") {
  auto rows = sample_rows();
  std::string t = format_table(info_of("simulated"), rows);
  INFO(t);
  CHECK(t.rfind("# nccl-autotune ", 0) == 0);
  CHECK(t.find("\n# simulated: these numbers come from a model of NCCL") != std::string::npos);
  // nccl-tests 2.19's header lines and column widths, plus our column.
  CHECK(
      t.find("\n#                                                              out-of-place                 "
             "      in-place          \n") != std::string::npos);
  CHECK(
      t.find(
          "\n#       size         count      type   redop    root     time   algbw   busbw  #wrong     time "
          "  algbw   busbw  #wrong  algo/proto/channels\n") != std::string::npos);
  CHECK(
      t.find(
          "\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us) "
          " (GB/s)  (GB/s)        \n") != std::string::npos);
  // Each half's median time, algbw and busbw as nccl-tests prints them.
  CHECK(
      t.find(
          "\n        1024           256     float     sum      -1    10.00    0.10    0.18       0    10.50 "
          "   0.10    0.17       0  ring/ll/ch2\n") != std::string::npos);
  CHECK(
      t.find(
          "\n        8192          2048     float     sum      -1    12.00    0.68    1.19       0    12.20 "
          "   0.67    1.18       1  ring/ll/ch2\n#   8192 B in-place: wrong_result: rank 3: 5 of 2048 "
          "elements wrong\n") != std::string::npos);
  CHECK(
      t.find(
          "\n       65536         16384     float     sum      -1        -       -       -       -        - "
          "      -       -       -  unsupported\n#   65536 B: unsupported: NCCL marked ring/ll unusable\n") !=
      std::string::npos);
  // Reduce has a root; its halves ran different protocols.
  CHECK(
      t.find(
          "\n        1024           256     float     sum       0     9.00    0.11    0.11       0     9.50 "
          "   0.11    0.11       0  ring/ll/ch2|ring/simple/ch2\n") != std::string::npos);
  // One test per collective, each with its footer: the wrong half counts, the unsupported ones do not.
  CHECK(t.find("# Collective test starting: all_reduce_perf\n# nccl-autotune bench: ranks 8 nodes 1 forced "
               "ring/ll "
               "source simulated nccl 2.28.9\n") != std::string::npos);
  CHECK(t.find("# Out of bounds values : 1 FAILED\n# Avg bus bandwidth    : 0.679904 (simulated)\n#\n"
               "# Collective test concluded: all_reduce_perf\n") != std::string::npos);
  CHECK(t.find("# Collective test starting: reduce_perf\n") != std::string::npos);
  CHECK(t.find("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.110784 (simulated)\n") !=
        std::string::npos);
  CHECK(t.find("# Collective test concluded: reduce_perf\n") != std::string::npos);
  std::string standin = format_table(info_of("standin"), rows);
  CHECK(standin.find("\n# stand-in: the stand-in NCCL of tests/standin ran these") != std::string::npos);
  CHECK(standin.find("source standin nccl 2.28.9\n") != std::string::npos);
  CHECK(standin.find("# Avg bus bandwidth    : 0.110784 (stand-in)\n") != std::string::npos);
  std::string measured = format_table(info_of("measured"), rows);
  CHECK(measured.find("simulated") == std::string::npos);
  CHECK(measured.find("stand-in") == std::string::npos);
  CHECK(measured.find("source measured") != std::string::npos);
  std::string j = format_json(info_of("measured"), rows);
  CHECK(j.find("\"outcome\": \"unsupported\"") != std::string::npos);
  CHECK(j.find("\"half\": \"in_place\"") != std::string::npos);
  CHECK(j.find("\"algorithm\": \"ring\"") != std::string::npos);
}

TEST_CASE("import-nccl-tests reads bench's table back: times, candidate, scale, what NCCL ran", "[bench]") {
  auto rows = sample_rows();
  const std::string table = format_table(info_of("measured"), rows);
  NcclTestsFile file = parse_nccl_tests_file(table, "bench.txt");
  REQUIRE(file.tests.size() == 2);
  CHECK(file.tests[0].collective == "allreduce");
  CHECK(file.tests[1].collective == "reduce");
  CHECK(file.tests[0].forced == "ring/ll");
  CHECK(file.tests[0].ranks() == 8);
  CHECK(file.tests[0].nccl_version == "2.28.9");
  std::vector<NcclTestsFile> files = {file};
  ImportResult imported = import_nccl_tests(files, ImportOptions{});
  REQUIRE(imported.records.size() == 3);  // the unsupported size is not imported
  CHECK(imported.header.source == "imported");
  CHECK(imported.header.nccl_version == "2.28.9");
  const std::vector<const BenchRow*> measured = {&rows[0], &rows[1], &rows[3]};
  for (size_t i = 0; i < 3; ++i) {
    const auto& r = imported.records[i];
    const BenchRow& b = *measured[i];
    CHECK(r.scale == Scale{1, 8});
    CHECK(r.measurement.request.collective == b.out_of_place.request.collective);
    CHECK(r.measurement.request.bytes == b.out_of_place.request.bytes);
    CHECK(r.measurement.request.candidate == b.out_of_place.request.candidate);
    REQUIRE(r.measurement.times_us.size() == 2);
    CHECK(r.measurement.times_us[0] == Approx(b.out_of_place.median_us()).margin(0.005));
    CHECK(r.measurement.times_us[1] == Approx(b.in_place.median_us()).margin(0.005));
    CHECK(r.published_busbw_gbps[0] == Approx(b.out_of_place.busbw_gbps).margin(0.005));
    CHECK(r.measurement.used_algorithm == nccl::Algorithm::ring);
    CHECK(r.measurement.used_protocol == nccl::Protocol::ll);
    CHECK(r.measurement.used_channels == 2);
  }
  CHECK(imported.records[1].measurement.outcome == Outcome::wrong_result);
  CHECK(imported.records[0].measurement.outcome == Outcome::ok);
  bool said = false;
  for (const auto& w : imported.warnings)
    said |= w.find("bench could not measure 65536 B (unsupported)") != std::string::npos;
  CHECK(said);
  // A simulated table stays simulated.
  std::vector<NcclTestsFile> sim = {
      parse_nccl_tests_file(format_table(info_of("simulated"), rows), "sim.txt")};
  ImportResult back = import_nccl_tests(sim, ImportOptions{});
  CHECK(back.header.source == "simulated");
  CHECK(back.records[0].source == "simulated");
  // So does one made on the stand-in NCCL: importing never turns the model's numbers into measurements.
  std::vector<NcclTestsFile> standin = {
      parse_nccl_tests_file(format_table(info_of("standin"), rows), "standin.txt")};
  ImportResult kept = import_nccl_tests(standin, ImportOptions{});
  CHECK(kept.header.source == "standin");
  CHECK(kept.records[0].source == "standin");
}
