#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "search/journal.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace autotune::search;
using namespace autotune::nccl;
using namespace autotune::runners;

using autotune::test::TempDir;

namespace {

JournalRecord sample_record(uint64_t bytes) {
  JournalRecord r;
  r.setting = {"hca=mlx5_0", {{"NCCL_IB_HCA", "=mlx5_0"}}};
  r.scale = {2, 16};
  r.attempt = 1;
  r.measurement.request.collective = Collective::allgather;
  r.measurement.request.bytes = bytes;
  r.measurement.request.candidate = {Algorithm::ring, Protocol::ll128, 8};
  r.measurement.request.repetitions = 3;
  r.measurement.outcome = Outcome::ok;
  r.measurement.times_us = {10.5, 11.0, 10.75};
  r.measurement.mean_times_us = {10.0, 10.5, 10.25};
  r.measurement.algbw_gbps = 99.5;
  r.measurement.busbw_gbps = 93.28125;
  r.measurement.used_algorithm = Algorithm::ring;
  r.measurement.used_protocol = Protocol::ll128;
  r.measurement.used_channels = 8;
  r.source = "simulated";
  r.runner = "simulator: 2 x 8 H100";
  r.time = "2026-11-30T04:00:00Z";
  return r;
}

}  // namespace

TEST_CASE("journal: header, records and job events round-trip through the file") {
  const TempDir tmp("roundtrip");
  const fs::path dir = tmp.path();
  fs::path path = dir / "j.jsonl";
  JournalHeader h;
  h.created = "2026-11-30T04:00:00Z";
  h.source = "simulated";
  h.fingerprint = "h100-sxm-8x.nvswitch.ib-ndr-8";
  h.nodes = 2;
  h.gpus_per_node = 8;
  h.strategy = "adaptive";
  h.collectives = {Collective::allreduce, Collective::allgather};
  h.min_bytes = 8;
  h.max_bytes = 8ull << 30;
  h.scales = {{1, 8}, {2, 16}};
  h.settings = {{"default", {}}, {"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}}};
  h.seed = 42;
  h.repetitions = 5;
  h.runner = "simulator: 2 x 8 H100";
  h.health = "2 node(s) checked by check (simulated): none blocks";
  h.health_findings = {"node 1 (h1): GPU0 clocks_throttled (warn): SM clock at 80%"};
  h.hosts = {"gpu-a01", "gpu-a02"};
  JournalRecord failed = sample_record(64);
  failed.measurement.outcome = Outcome::wrong_result;
  failed.measurement.detail = "3 wrong elements";
  failed.measurement.request.candidate = {};  // NCCL's default
  failed.measurement.used_algorithm.reset();
  failed.measurement.used_protocol.reset();
  {
    JournalWriter w(path);
    w.write(h);
    std::vector<JournalRecord> batch = {sample_record(1024), failed};
    w.write(batch);
    w.write(JournalJobEvent{"cross_nic=1", "failed", "srun: error: node down\n", "2026-11-30T04:01:00Z"});
  }
  auto entries = read_journal(path);
  REQUIRE(entries.size() == 4);
  REQUIRE(entries[0].header());
  CHECK(entries[0].line == 1);
  const JournalHeader& hr = *entries[0].header();
  CHECK(hr.version == kJournalVersion);
  CHECK(hr.fingerprint == h.fingerprint);
  CHECK(hr.collectives == h.collectives);
  CHECK(hr.max_bytes == h.max_bytes);
  CHECK(hr.scales == h.scales);
  CHECK(hr.settings == h.settings);
  CHECK(hr.seed == 42);
  CHECK(hr.runner == h.runner);
  CHECK(hr.health == h.health);
  CHECK(hr.health_findings == h.health_findings);
  CHECK(hr.hosts == h.hosts);

  REQUIRE(entries[1].record());
  const JournalRecord& r = *entries[1].record();
  JournalRecord expect = sample_record(1024);
  CHECK(r.setting == expect.setting);
  CHECK(r.scale == expect.scale);
  CHECK(r.attempt == 1);
  CHECK(r.measurement.request.collective == Collective::allgather);
  CHECK(r.measurement.request.bytes == 1024);
  CHECK(r.measurement.request.candidate == expect.measurement.request.candidate);
  CHECK(r.measurement.request.repetitions == 3);
  CHECK(r.measurement.times_us == expect.measurement.times_us);
  CHECK(r.measurement.mean_times_us == expect.measurement.mean_times_us);
  CHECK(r.measurement.busbw_gbps == expect.measurement.busbw_gbps);
  CHECK(r.measurement.used_algorithm == Algorithm::ring);
  CHECK(r.measurement.used_channels == 8);
  CHECK(r.source == "simulated");

  REQUIRE(entries[2].record());
  CHECK(entries[2].record()->measurement.outcome == Outcome::wrong_result);
  CHECK(entries[2].record()->measurement.detail == "3 wrong elements");
  CHECK(entries[2].record()->measurement.request.candidate.is_default());
  CHECK_FALSE(entries[2].record()->measurement.used_algorithm);

  REQUIRE(entries[3].job_event());
  CHECK(entries[3].job_event()->status == "failed");
  CHECK(entries[3].job_event()->detail == "srun: error: node down\n");
  fs::remove_all(dir);
}

TEST_CASE("journal: a torn last line is ignored by the reader and cut by the next writer") {
  const TempDir tmp("torn");
  const fs::path dir = tmp.path();
  fs::path path = dir / "j.jsonl";
  std::string full = to_json_line(sample_record(8)) + "\n";
  std::string second = to_json_line(sample_record(16));
  autotune::write_file_atomically(path, full + second.substr(0, second.size() / 2));
  auto entries = read_journal(path);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].record()->measurement.request.bytes == 8);
  {
    JournalWriter w(path);
    std::vector<JournalRecord> batch = {sample_record(32)};
    w.write(batch);
  }
  entries = read_journal(path);
  REQUIRE(entries.size() == 2);
  CHECK(entries[1].record()->measurement.request.bytes == 32);
  CHECK(entries[1].line == 2);
  fs::remove_all(dir);
}

TEST_CASE("journal: the layout a calibration was given round-trips, a bad one names the line") {
  const TempDir tmp("layout");
  const fs::path path = tmp.path() / "j.jsonl";
  JournalHeader h;
  h.source = "simulated";
  h.layout = autotune::profiles::JobLayout{
      "tp=2,ep=8,pp=2", {{"ep", 2, 8, 16, {Operation::alltoall}}, {"pp", 2, 2, 64, {Operation::sendrecv}}}};
  {
    JournalWriter w(path);
    w.write(h);
  }
  auto entries = read_journal(path);
  REQUIRE(entries.size() == 1);
  REQUIRE(entries[0].header());
  CHECK(entries[0].header()->layout == h.layout);
  // A journal written before the layout was kept has none.
  JournalHeader none;
  none.source = "simulated";
  autotune::write_file_atomically(path, to_json_line(none) + "\n");
  CHECK_FALSE(read_journal(path)[0].header()->layout);
  std::string bad = to_json_line(h);
  bad.replace(bad.find("\"alltoall\""), 10, "\"alltoal\"");
  autotune::write_file_atomically(path, bad + "\n");
  try {
    read_journal(path);
    FAIL("expected an InputError");
  } catch (const autotune::InputError& e) {
    CHECK(e.line() == 1);
    CHECK_THAT(e.message(), Catch::Contains("field \"layout\": expected operation names, found \"alltoal\""));
  }
  bad = to_json_line(h);
  bad.replace(bad.find("\"ep\""), 4, "\"xp\"");
  autotune::write_file_atomically(path, bad + "\n");
  CHECK_THROWS_WITH(read_journal(path), Catch::Contains("expected a group kind"));
}

TEST_CASE("journal: a bad line in the middle names the file and line") {
  const TempDir tmp("bad");
  const fs::path dir = tmp.path();
  fs::path path = dir / "j.jsonl";
  std::string good = to_json_line(sample_record(8)) + "\n";
  autotune::write_file_atomically(path, good + "{not json\n" + good);
  try {
    read_journal(path);
    FAIL("expected an InputError");
  } catch (const autotune::InputError& e) {
    CHECK(e.file() == path.string());
    CHECK(e.line() == 2);
  }
  std::string bad_outcome = good;
  bad_outcome.replace(bad_outcome.find("\"ok\""), 4, "\"meh\"");
  autotune::write_file_atomically(path, good + bad_outcome);
  try {
    read_journal(path);
    FAIL("expected an InputError");
  } catch (const autotune::InputError& e) {
    CHECK(e.line() == 2);
    CHECK_THAT(e.message(), Catch::Contains("outcome"));
  }
  fs::remove_all(dir);
}

TEST_CASE("journal: a point-to-point record names its operation, and reads back as one") {
  JournalRecord r = sample_record(1 << 20);
  r.measurement.request.set_operation(Operation::alltoall);
  r.measurement.request.candidate = {};
  r.measurement.used_algorithm.reset();
  r.measurement.used_protocol.reset();
  r.measurement.used_channels = 0;
  const std::string line = to_json_line(r);
  CHECK(line.find("\"operation\":\"alltoall\"") != std::string::npos);
  CHECK(line.find("\"collective\"") == std::string::npos);
  auto back = parse_journal_line(line, "j.jsonl", 3);
  REQUIRE(back);
  CHECK(back->record()->measurement.request.operation() == Operation::alltoall);
  CHECK(back->record()->measurement.request.point_to_point == Operation::alltoall);
  // A collective's line is what it always was: "collective", no "operation" (older readers read it).
  const std::string old = to_json_line(sample_record(8));
  CHECK(old.find("\"collective\":\"allgather\"") != std::string::npos);
  CHECK(old.find("\"operation\"") == std::string::npos);
  auto collective = parse_journal_line(old, "j.jsonl", 4);
  CHECK(collective->record()->measurement.request.operation() == Operation::allgather);
  CHECK_FALSE(collective->record()->measurement.request.point_to_point.has_value());
  // An unknown operation, and a forced candidate for a point-to-point one, are refused with the line.
  std::string unknown = line;
  unknown.replace(unknown.find("alltoall"), 8, "alltoallv");
  CHECK_THROWS_WITH(parse_journal_line(unknown, "j.jsonl", 5),
                    Catch::Contains("field \"operation\": expected an operation name, found \"alltoallv\""));
  JournalRecord forced = r;
  forced.measurement.request.candidate.algorithm = Algorithm::ring;
  CHECK(record_problem(forced).value_or("").find("expected no forced candidate for alltoall") == 0);
}

TEST_CASE("journal: lines of unknown types and unknown fields are skipped for forward compatibility") {
  const TempDir tmp("unknown");
  const fs::path dir = tmp.path();
  fs::path path = dir / "j.jsonl";
  std::string rec = to_json_line(sample_record(8));
  rec.insert(1, "\"future_field\":[1,2],");
  autotune::write_file_atomically(path, "{\"type\":\"annotation\",\"text\":\"x\"}\n" + rec + "\n");
  auto entries = read_journal(path);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].line == 2);
  CHECK(entries[0].record()->measurement.request.bytes == 8);
  fs::remove_all(dir);
}

TEST_CASE("journal: a fresh calibration keeps the previous journal aside, named with its time") {
  const TempDir tmp("keep");
  const fs::path dir = tmp.path();
  const fs::path journal = dir / "c.journal.jsonl";
  CHECK_FALSE(keep_previous_journal(journal));  // nothing there: nothing to keep
  JournalHeader h;
  h.source = "simulated";
  h.created = "2026-11-30T04:37:15Z";
  {
    JournalWriter w(journal);
    w.write(h);
    w.write(std::vector<JournalRecord>{sample_record(1024)});
  }
  const std::string before = autotune::read_file(journal);
  auto kept = keep_previous_journal(journal);
  REQUIRE(kept);
  CHECK(kept->journal == dir / "c.journal.20261130T043715Z.jsonl");
  CHECK(kept->parts.empty());
  CHECK(autotune::read_file(kept->journal) == before);  // whole, not truncated
  CHECK_FALSE(fs::exists(journal));
  CHECK_THAT(kept->describe(), Catch::Contains(kept->journal.string()));
  // A second calibration started the same second: its journal is kept under the next free name, with its
  // parts folder.
  {
    JournalWriter w(journal);
    w.write(h);
  }
  fs::create_directories(journal_parts_dir(journal));
  autotune::write_file_atomically(journal_parts_dir(journal) / "job0.jsonl", "part\n");
  auto again = keep_previous_journal(journal);
  REQUIRE(again);
  CHECK(again->journal == dir / "c.journal.20261130T043715Z-2.jsonl");
  CHECK(again->parts == dir / "c.journal.20261130T043715Z-2.parts");
  CHECK(autotune::read_file(again->parts / "job0.jsonl") == "part\n");
  // An empty file holds nothing worth keeping.
  autotune::write_file_atomically(journal, "");
  CHECK_FALSE(keep_previous_journal(journal));
  CHECK_FALSE(fs::exists(journal));
  fs::remove_all(dir);
}

TEST_CASE("journal: a measurement's per-group times are kept when two or more groups ran, absent otherwise") {
  JournalRecord several = sample_record(4 << 20);
  several.measurement.group_times_us = {10.0, 13.5, 10.25};
  const std::string line = to_json_line(several);
  CHECK(line.find("\"group_times_us\":[10.0,13.5,10.25]") != std::string::npos);
  auto back = parse_journal_line(line, "j.jsonl", 2);
  REQUIRE(back);
  REQUIRE(back->record());
  CHECK(back->record()->measurement.group_times_us == several.measurement.group_times_us);
  // One group is the measurement itself: nothing is written, and an older line without the field reads.
  JournalRecord one = sample_record(4 << 20);
  one.measurement.group_times_us = {10.0};
  CHECK(to_json_line(one).find("group_times_us") == std::string::npos);
  back = parse_journal_line(to_json_line(one), "j.jsonl", 3);
  REQUIRE(back);
  CHECK(back->record()->measurement.group_times_us.empty());
  // A group time no measurement can have is refused with the file and line.
  std::string bad = line;
  bad.replace(bad.find("13.5"), 4, "-1.0");
  CHECK_THROWS_WITH(parse_journal_line(bad, "j.jsonl", 7),
                    Catch::Contains("j.jsonl:7") && Catch::Contains("group_times_us"));
}
