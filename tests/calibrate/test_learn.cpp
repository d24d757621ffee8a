// learn: telemetry folded into production evidence, and the rules revised only where that evidence beats
// them beyond the noise (tune's interquartile test and min_gain).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "calibrate/learn.hpp"
#include "common/atomic_file.hpp"
#include "common/input_error.hpp"

using namespace autotune;
using namespace autotune::search;
using namespace autotune::calibrate;
using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "autotune-learn-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()));
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

profiles::Profile profile_with(profiles::Rule r) {
  profiles::Profile p;
  p.cluster.name = "c";
  p.provenance.nccl_version = "2.28.9";
  p.rules = {r};
  return p;
}

// A 1 MiB AllReduce rule on 2x8, Ring/LL, whose calibration said NCCL's default ran at 100 GB/s busbw.
profiles::Rule rule() {
  profiles::Rule r;
  r.collective = Collective::allreduce;
  r.min_bytes = 512 << 10;
  r.max_bytes = 2 << 20;
  r.algorithm = Algorithm::ring;
  r.protocol = Protocol::ll;
  r.nodes = profiles::CountRange{2, 2};
  r.ranks = profiles::CountRange{16, 16};
  r.busbw_gbps = 110.0;
  r.default_busbw_gbps = 100.0;
  return r;
}

profiles::TelemetryRow row(Algorithm a, Protocol p, double p50_us, uint64_t count = 500) {
  profiles::TelemetryRow r;
  r.nodes = 2, r.ranks = 16, r.ranks_per_node = 8, r.bytes_log2 = 20, r.count = count;
  r.algorithm = a, r.protocol = p, r.channels = 8;
  r.mean_bytes = 1 << 20;
  r.mean_us = p50_us, r.p25_us = p50_us * 0.97, r.p50_us = p50_us, r.p75_us = p50_us * 1.03;
  r.p90_us = p50_us * 1.05, r.p99_us = p50_us * 1.1, r.min_us = p50_us * 0.9, r.max_us = p50_us * 1.2;
  return r;
}

std::vector<TelemetryFile> files(std::vector<profiles::TelemetryRow> rows) {
  profiles::Telemetry t;
  t.digest = "0123456789abcdef";
  t.cluster = "c";
  t.rows = std::move(rows);
  return {TelemetryFile{"a.telemetry", t}};
}

// NCCL's default at 100 GB/s busbw for 1 MiB on 16 ranks: bytes * 2 * 15 / 16 / (100 * 1e3) us.
constexpr double kDefaultUs = 1048576.0 * 2 * 15 / 16 / 1e5;

}  // namespace

TEST_CASE("learn: a rule three times slower in production than NCCL's default was is dropped", "[learn]") {
  auto result = learn(profile_with(rule()), files({row(Algorithm::ring, Protocol::ll, 3 * kDefaultUs)}), {});
  REQUIRE(result.changes.size() == 1);
  CHECK(result.changes[0].kind == LearnChange::Kind::dropped);
  CHECK(result.changes[0].why.find("slower, all of its interquartile range") != std::string::npos);
  CHECK(result.profile.rules.empty());
}

TEST_CASE("learn: a rule as fast as the calibration said stays, and noise alone changes nothing", "[learn]") {
  auto result =
      learn(profile_with(rule()), files({row(Algorithm::ring, Protocol::ll, 1.01 * kDefaultUs)}), {});
  CHECK(result.changes.empty());
  CHECK(result.profile.rules.size() == 1);
  // Too few calls to count.
  auto few = learn(profile_with(rule()), files({row(Algorithm::ring, Protocol::ll, 3 * kDefaultUs, 5)}), {});
  CHECK(few.changes.empty());
}

TEST_CASE("learn: a runner-up explored that is clearly faster replaces the rule, which becomes the runner-up",
          "[learn]") {
  profiles::Rule r = rule();
  r.runner_up = profiles::Rule::RunnerUp{Algorithm::tree, Protocol::ll, 0, 105.0};
  auto result = learn(
      profile_with(r),
      files({row(Algorithm::ring, Protocol::ll, 100.0), row(Algorithm::tree, Protocol::ll, 80.0, 40)}), {});
  REQUIRE(result.changes.size() == 1);
  CHECK(result.changes[0].kind == LearnChange::Kind::replaced);
  REQUIRE(result.profile.rules.size() == 1);
  const profiles::Rule& now = result.profile.rules[0];
  CHECK(now.algorithm == Algorithm::tree);
  REQUIRE(now.runner_up);
  CHECK(now.runner_up->algorithm == Algorithm::ring);
  CHECK(now.runner_up->protocol == Protocol::ll);
}

TEST_CASE("learn: a runner-up explored that did not win retires (the range is decided)", "[learn]") {
  profiles::Rule r = rule();
  r.runner_up = profiles::Rule::RunnerUp{Algorithm::tree, Protocol::ll, 0, 105.0};
  auto result = learn(
      profile_with(r),
      files({row(Algorithm::ring, Protocol::ll, 100.0), row(Algorithm::tree, Protocol::ll, 101.0, 40)}), {});
  REQUIRE(result.changes.size() == 1);
  CHECK(result.changes[0].kind == LearnChange::Kind::runner_up_retired);
  REQUIRE(result.profile.rules.size() == 1);
  CHECK_FALSE(result.profile.rules[0].runner_up);
  CHECK(result.profile.rules[0].algorithm == Algorithm::ring);
}

TEST_CASE("learn: production records are kept apart from calibration measurements", "[learn]") {
  auto records = production_records(pool(files({row(Algorithm::ring, Protocol::ll, 100.0)})));
  REQUIRE(records.size() == 1);
  CHECK(records[0].source == "production");
  CHECK(records[0].measurement.times_us.size() == 5);
  // derive() leaves them out: alone, there is nothing to derive from.
  CHECK_THROWS_AS(derive(records, {}), InputError);
}

TEST_CASE("learn: telemetry files are read whole or refused naming the file and line", "[learn]") {
  TempDir dir;
  profiles::Telemetry t;
  t.digest = "0123456789abcdef";
  t.cluster = "c";
  t.rows = {row(Algorithm::ring, Protocol::ll, 100.0)};
  const std::string whole = profiles::format_telemetry(t);
  write_file_atomically(dir.path / "a.telemetry", whole);
  write_file_atomically(dir.path / ".a.telemetry.tmp.XYZ", whole.substr(0, 40));  // an interrupted write
  t.cluster = "other";
  write_file_atomically(dir.path / "b.telemetry", profiles::format_telemetry(t));
  auto read = read_telemetry(dir.path, "c");
  REQUIRE(read.size() == 1);
  CHECK(read[0].file.filename() == "a.telemetry");
  write_file_atomically(dir.path / "torn.telemetry", whole.substr(0, whole.size() - 8));
  try {
    read_telemetry(dir.path, "c");
    FAIL("a torn file was accepted");
  } catch (const InputError& e) {
    CHECK(e.file() == (dir.path / "torn.telemetry").string());
    CHECK(e.line() > 0);
  }
}
