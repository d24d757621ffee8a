// nccl-tests logs into journal records, and the journal round trip (write, read back, same measurements).
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>

#include "common/input_error.hpp"
#include "nccl_tests/import_nccl_tests.hpp"
#include "search/journal.hpp"
#include "search/strategy_samples.hpp"
#include "support/temp_dir.hpp"
#include "tests/nccl_tests/fixture_path.hpp"

using autotune::test::TempDir;

using namespace autotune;
using namespace autotune::search;
using namespace autotune::nccl_tests;
using namespace autotune::runners;
using autotune::nccl_tests::test::fixture;

namespace {}  // namespace

TEST_CASE("a log forced to Ring/Simple becomes ring/simple records at its scale") {
  std::vector<NcclTestsFile> logs = {read_nccl_tests_file(fixture("all_gather_perf_v2.13_mpi_noisy.log"))};
  ImportOptions o;
  o.time = "2026-11-30T00:00:00Z";
  auto result = import_nccl_tests(logs, o);
  REQUIRE(result.records.size() == 8);
  const auto& r = result.records[3];
  CHECK(r.source == "imported");
  CHECK(r.scale == Scale{2, 16});
  CHECK(r.setting.is_default());
  CHECK(r.measurement.request.collective == nccl::Collective::allgather);
  CHECK(r.measurement.request.candidate.algorithm == nccl::Algorithm::ring);
  CHECK(r.measurement.request.candidate.protocol == nccl::Protocol::simple);
  CHECK(r.measurement.outcome == Outcome::ok);
  CHECK(r.measurement.times_us.size() == 2);
  // busbw recomputed from the median time matches what nccl-tests printed, to its rounding.
  CHECK(r.measurement.busbw_gbps == Approx(logs[0].tests[0].rows[3].out_of_place.busbw_gbps).epsilon(0.03));
  CHECK(result.header.source == "imported");
  CHECK(result.header.strategy == "imported");
  CHECK(result.header.nccl_version == "2.18.3");
  CHECK(result.header.nodes == 2);
  CHECK(result.header.gpus_per_node == 8);
  CHECK(result.header.gpu_model == "NVIDIA H100 80GB HBM3");
  CHECK(result.header.cluster == "gpu-a01");
  CHECK(result.header.min_bytes == 16384);
  CHECK(result.header.max_bytes == 268435456);
}

TEST_CASE("options say what the log does not, a log without NCCL_ALGO needs them") {
  std::vector<NcclTestsFile> logs = {read_nccl_tests_file(fixture("h200_rs.log"))};
  ImportOptions o;
  CHECK_THROWS_WITH(import_nccl_tests(logs, o), Catch::Contains("--default"));
  o.as_default = true;
  auto def = import_nccl_tests(logs, o);
  CHECK(def.records.front().measurement.request.candidate.is_default());
  CHECK(def.records.front().scale == Scale{1, 8});
  CHECK(def.header.nccl_version == "2.28.9");  // from nccl-library=22809
  ImportOptions forced;
  forced.algorithm = nccl::Algorithm::tree;  // ReduceScatter cannot run Tree
  CHECK_THROWS_WITH(import_nccl_tests(logs, forced), Catch::Contains("cannot run reducescatter with tree"));
  forced.algorithm = nccl::Algorithm::pat;
  forced.protocol = nccl::Protocol::simple;
  CHECK(import_nccl_tests(logs, forced).records.front().measurement.request.candidate.algorithm ==
        nccl::Algorithm::pat);
}

TEST_CASE("an option that contradicts the log wins with a warning") {
  std::vector<NcclTestsFile> logs = {read_nccl_tests_file(fixture("all_reduce_perf_truncated.log"))};
  ImportOptions o;
  auto from_log = import_nccl_tests(logs, o);
  CHECK(to_string(from_log.records.front().measurement.request.candidate) == "tree/ll");
  o.algorithm = nccl::Algorithm::ring;
  o.protocol = nccl::Protocol::ll;
  o.nodes = 4;
  auto over = import_nccl_tests(logs, o);
  CHECK(to_string(over.records.front().measurement.request.candidate) == "ring/ll");
  CHECK(over.records.front().scale == Scale{4, 16});
  int said = 0;
  for (const auto& w : over.warnings)
    said += w.find("the log says it ran tree/ll") != std::string::npos ||
            w.find("shows 2 nodes") != std::string::npos;
  CHECK(said == 2);
}

TEST_CASE("wrong rows become wrong_result records, point-to-point logs records of their operation") {
  std::vector<NcclTestsFile> logs = {read_nccl_tests_file(fixture("reduce_perf_v2.17_wrong.log")),
                                     read_nccl_tests_file(fixture("sendrecv_perf_v2.13.log"))};
  ImportOptions o;
  o.algorithm = nccl::Algorithm::ring;  // the log itself says LL128 only
  auto result = import_nccl_tests(logs, o);
  REQUIRE(result.records.size() == 7 + 6);
  int wrong = 0;
  for (const auto& r : result.records) {
    if (r.measurement.request.point_to_point) {
      // --algo says nothing of sendrecv: NCCL's tuner never sees it, so nothing was forced.
      CHECK(r.measurement.request.operation() == nccl::Operation::sendrecv);
      CHECK(r.measurement.request.candidate.is_default());
      continue;
    }
    CHECK(to_string(r.measurement.request.candidate) == "ring/*");
    if (r.measurement.outcome == Outcome::wrong_result) {
      ++wrong;
      CHECK(r.measurement.detail.find("#wrong 1024") != std::string::npos);
    }
  }
  CHECK(wrong == 2);
  CHECK(result.not_imported.empty());
  CHECK(result.header.collectives == std::vector<nccl::Collective>{nccl::Collective::reduce});
}

TEST_CASE("alltoall_perf and sendrecv_perf import as measurements of their operations, never as rules") {
  std::vector<NcclTestsFile> files = {read_nccl_tests_file(fixture("alltoall_perf_v2.19.log")),
                                      read_nccl_tests_file(fixture("sendrecv_perf_v2.13.log"))};
  ImportOptions d;
  d.as_default = true;
  auto result = import_nccl_tests(files, d);
  REQUIRE(result.records.size() == 6 + 6);
  CHECK(result.tests_imported == 2);
  CHECK(result.header.collectives.empty());         // the collectives calibrated: none
  const auto& a2a = result.records[2].measurement;  // 1 MiB on 8 H200: 28.64 and 28.57 us
  CHECK(a2a.request.operation() == nccl::Operation::alltoall);
  CHECK(a2a.request.bytes == 1048576);
  CHECK(a2a.algbw_gbps == Approx(1048576 / 28.605 / 1e3));
  CHECK(a2a.busbw_gbps == Approx(a2a.algbw_gbps * 7 / 8));
  CHECK(result.records[2].scale == Scale{1, 8});
  const auto& sr = result.records[11].measurement;  // 256 KiB on 2 A6000: busbw = algbw
  CHECK(sr.request.operation() == nccl::Operation::sendrecv);
  CHECK(sr.busbw_gbps == Approx(sr.algbw_gbps));
  CHECK(result.warnings.empty());
  // Through the journal and into a derivation: kept, read back as what they are, and no rule comes of them.
  TempDir dir;
  auto path = dir.path() / "p2p.journal.jsonl";
  {
    JournalWriter w(path);
    w.write(result.header);
    w.write(result.records);
  }
  auto back = load_journal(path);
  REQUIRE(back.records.size() == result.records.size());
  CHECK(back.skipped.empty());
  for (size_t i = 0; i < back.records.size(); ++i)
    CHECK(back.records[i].measurement.request.operation() ==
          result.records[i].measurement.request.operation());
  MeasurementTable table;
  for (const auto& r : back.records) table.add(r.measurement);
  CHECK(table.collectives().empty());
}

TEST_CASE("imported records survive the journal round trip") {
  TempDir dir;
  auto path = dir.path() / "imported.journal.jsonl";
  std::vector<NcclTestsFile> logs = {read_nccl_tests_file(fixture("reduce_perf_v2.17_wrong.log")),
                                     read_nccl_tests_file(fixture("all_reduce_perf_v2.10.log"))};
  ImportOptions o;
  o.algorithm = nccl::Algorithm::ring;
  o.protocol = nccl::Protocol::ll128;
  o.time = "2026-11-30T00:00:00Z";
  auto result = import_nccl_tests(logs, o);
  {
    JournalWriter w(path);
    w.write(result.header);
    w.write(result.records);
  }
  auto back = load_journal(path);
  REQUIRE(back.header);
  CHECK(back.header->source == "imported");
  CHECK(back.header->collectives.size() == 2);
  REQUIRE(back.records.size() == result.records.size());
  for (size_t i = 0; i < back.records.size(); ++i) {
    const auto& a = result.records[i].measurement;
    const auto& b = back.records[i].measurement;
    CHECK(b.request.collective == a.request.collective);
    CHECK(b.request.bytes == a.request.bytes);
    CHECK(b.request.candidate == a.request.candidate);
    CHECK(b.outcome == a.outcome);
    CHECK(b.times_us == a.times_us);
    CHECK(back.records[i].scale == result.records[i].scale);
    CHECK(back.records[i].source == "imported");
  }
}

TEST_CASE("several tests in one file: each imported at its scale, the rest named with their reasons") {
  std::vector<NcclTestsFile> files = {read_nccl_tests_file(fixture("several_tests_v2.19.log"))};
  ImportOptions o;  // every test says NCCL_ALGO=Ring
  auto result = import_nccl_tests(files, o);
  CHECK(result.tests == 5);
  CHECK(result.tests_imported == 4);  // the all-to-all too, as a measurement of its operation
  REQUIRE(result.records.size() == 27 + 9);
  std::map<nccl::Operation, int> per;
  for (const auto& r : result.records) {
    ++per[r.measurement.request.operation()];
    CHECK(r.scale == Scale{2, 16});
    CHECK(to_string(r.measurement.request.candidate) ==
          (r.measurement.request.point_to_point ? "default" : "ring/*"));
  }
  CHECK(per[nccl::Operation::allreduce] == 9);
  CHECK(per[nccl::Operation::allgather] == 9);
  CHECK(per[nccl::Operation::reducescatter] == 9);
  CHECK(per[nccl::Operation::alltoall] == 9);
  REQUIRE(result.not_imported.size() == 1);
  // The second all_reduce_perf ran float where the first ran double: the same series, not pooled.
  CHECK(result.not_imported[0].test.ends_with(":171-212 (all_reduce_perf)"));
  CHECK(result.not_imported[0].reason.find("ran float sum where") == 0);
  CHECK(result.not_imported[0].reason.find("ran double sum for the same allreduce") != std::string::npos);
  // The graph-launched all_gather says so in its runner.
  for (const auto& r : result.records)
    if (r.measurement.request.collective == nccl::Collective::allgather)
      CHECK(r.runner.find("all_gather_perf with CUDA graphs") != std::string::npos);
  CHECK(result.header.collectives.size() == 3);
}

TEST_CASE("each record keeps the busbw nccl-tests printed for both halves beside their times") {
  std::vector<NcclTestsFile> files = {read_nccl_tests_file(fixture("h200_rs.log"))};
  ImportOptions o;
  o.as_default = true;
  auto result = import_nccl_tests(files, o);
  const auto& row = files[0].tests[0].rows[4];
  const auto& r = result.records[4];
  CHECK(r.measurement.times_us == std::vector<double>{row.out_of_place.time_us, row.in_place.time_us});
  CHECK(r.published_busbw_gbps == std::vector<double>{135.92, 137.11});
  TempDir dir;
  {
    JournalWriter w(dir.path() / "j.jsonl");
    w.write(result.header);
    w.write(result.records);
  }
  CHECK(load_journal(dir.path() / "j.jsonl").records[4].published_busbw_gbps ==
        std::vector<double>{135.92, 137.11});
}

TEST_CASE("a table alone imports with --ranks and --nodes, a wrong --ranks is caught by the printed busbw") {
  std::vector<NcclTestsFile> files = {read_nccl_tests_file(fixture("table_only_all_reduce.log"))};
  ImportOptions o;
  o.as_default = true;
  CHECK_THROWS_WITH(import_nccl_tests(files, o), Catch::Contains("give --ranks R"));
  o.ranks = 16;
  CHECK_THROWS_WITH(import_nccl_tests(files, o), Catch::Contains("give --nodes N"));
  o.nodes = 2;
  auto result = import_nccl_tests(files, o);
  CHECK(result.records.size() == 7);
  CHECK(result.records[0].scale == Scale{2, 16});
  CHECK(result.warnings.empty());
  o.ranks = 8;  // busbw/algbw = 1.875 is 16 ranks' 2(n-1)/n, not 8's 1.75
  auto wrong = import_nccl_tests(files, o);
  REQUIRE(wrong.warnings.size() == 1);
  CHECK(wrong.warnings[0].find("the log ran on another rank count than imported") != std::string::npos);
  // A log with rank lines that --ranks contradicts: the option wins, said twice (lines and busbw).
  std::vector<NcclTestsFile> ranked = {read_nccl_tests_file(fixture("h200_rs.log"))};
  o.ranks = 4;
  o.nodes = std::nullopt;
  auto over = import_nccl_tests(ranked, o);
  CHECK(over.records[0].scale == Scale{1, 4});
  CHECK(over.warnings.size() == 2);
}

TEST_CASE("nccl-tests JSON imports like text: candidate from its env list, scale from its devices") {
  std::vector<NcclTestsFile> files = {read_nccl_tests_file(fixture("nccl_tests_v2.19.6.json"))};
  auto result = import_nccl_tests(files, ImportOptions{});
  REQUIRE(result.records.size() == 18);
  CHECK(to_string(result.records[0].measurement.request.candidate) == "nvls/simple");
  CHECK(result.records[0].scale == Scale{1, 8});
  CHECK(result.header.nccl_version == "2.28.9");
  CHECK(result.header.gpu_model == "NVIDIA H200");
  CHECK(result.warnings.empty());
}
