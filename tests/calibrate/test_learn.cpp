// learn: telemetry folded into production evidence, and the rules revised only where that evidence beats
// them beyond the noise (tune's interquartile test and min_gain).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "calibrate/learn.hpp"
#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "support/learn_fixtures.hpp"
#include "support/temp_dir.hpp"

using autotune::test::kLearnDefaultUs;
using autotune::test::learn_row;
using autotune::test::learn_rule;
using autotune::test::TempDir;

using namespace autotune;
using namespace autotune::search;
using namespace autotune::calibrate;
using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

namespace {

profiles::Profile profile_with(profiles::Rule r) {
  profiles::Profile p;
  p.cluster.name = "c";
  p.provenance.nccl_version = "2.28.9";
  p.rules = {r};
  return p;
}

// The rows as two jobs of two users saw them, the calls split between them (the default LearnOptions need
// two of each before evidence counts).
std::vector<TelemetryFile> files(std::vector<profiles::TelemetryRow> rows) {
  std::vector<TelemetryFile> out;
  for (int half = 0; half < 2; ++half) {
    profiles::Telemetry t;
    t.digest = "0123456789abcdef";
    t.cluster = "c";
    t.job = half == 0 ? "j1" : "j2";
    for (auto r : rows) {
      r.count = half == 0 ? r.count / 2 : r.count - r.count / 2;
      t.rows.push_back(r);
    }
    out.push_back(TelemetryFile{half == 0 ? "a.telemetry" : "b.telemetry", t, half == 0 ? "alice" : "bob"});
  }
  return out;
}

}  // namespace

TEST_CASE("learn: a rule three times slower in production than NCCL's default was is dropped", "[learn]") {
  auto result = learn(profile_with(learn_rule()),
                      files({learn_row(Algorithm::ring, Protocol::ll, 3 * kLearnDefaultUs)}), {});
  REQUIRE(result.changes.size() == 1);
  CHECK(result.changes[0].kind == LearnChange::Kind::dropped);
  CHECK(result.changes[0].why.find("slower, all of its interquartile range") != std::string::npos);
  CHECK(result.profile.rules.empty());
}

TEST_CASE("learn: a rule as fast as the calibration said stays, and noise alone changes nothing", "[learn]") {
  auto result = learn(profile_with(learn_rule()),
                      files({learn_row(Algorithm::ring, Protocol::ll, 1.01 * kLearnDefaultUs)}), {});
  CHECK(result.changes.empty());
  CHECK(result.profile.rules.size() == 1);
  // Too few calls to count.
  auto few = learn(profile_with(learn_rule()),
                   files({learn_row(Algorithm::ring, Protocol::ll, 3 * kLearnDefaultUs, 5)}), {});
  CHECK(few.changes.empty());
}

TEST_CASE("learn: a runner-up explored that is clearly faster replaces the rule, which becomes the runner-up",
          "[learn]") {
  profiles::Rule r = learn_rule();
  r.runner_up = profiles::Rule::RunnerUp{Algorithm::tree, Protocol::ll, 0, 105.0};
  auto result = learn(profile_with(r),
                      files({learn_row(Algorithm::ring, Protocol::ll, 100.0),
                             learn_row(Algorithm::tree, Protocol::ll, 80.0, 40)}),
                      {});
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
  profiles::Rule r = learn_rule();
  r.runner_up = profiles::Rule::RunnerUp{Algorithm::tree, Protocol::ll, 0, 105.0};
  auto result = learn(profile_with(r),
                      files({learn_row(Algorithm::ring, Protocol::ll, 100.0),
                             learn_row(Algorithm::tree, Protocol::ll, 101.0, 40)}),
                      {});
  REQUIRE(result.changes.size() == 1);
  CHECK(result.changes[0].kind == LearnChange::Kind::runner_up_retired);
  REQUIRE(result.profile.rules.size() == 1);
  CHECK_FALSE(result.profile.rules[0].runner_up);
  CHECK(result.profile.rules[0].algorithm == Algorithm::ring);
}

TEST_CASE("learn: production records are kept apart from calibration measurements", "[learn]") {
  auto records = production_records(pool(files({learn_row(Algorithm::ring, Protocol::ll, 100.0)})));
  REQUIRE(records.size() == 1);
  CHECK(records[0].source == "production");
  CHECK(records[0].measurement.times_us.size() == 5);
  // derive() leaves them out: alone, there is nothing to derive from.
  CHECK_THROWS_AS(derive(records, {}), InputError);
}

TEST_CASE("learn: evidence from one job, or from one user's jobs, is not counted", "[learn]") {
  auto both = files({learn_row(Algorithm::ring, Protocol::ll, 3 * kLearnDefaultUs)});
  auto one_job = learn(profile_with(learn_rule()), {both[0]}, {});
  CHECK(one_job.changes.empty());
  REQUIRE(one_job.held_back.size() == 1);
  CHECK_THAT(one_job.held_back[0],
             Catch::Contains("1 job (j1) of 1 user (alice)") && Catch::Contains("needs 2 jobs of 2 users"));
  both[1].user = "alice";  // two jobs, one user
  CHECK(learn(profile_with(learn_rule()), both, {}).changes.empty());
  LearnOptions owner_allows;  // the store's owner lowers the bar: one user's two jobs suffice
  owner_allows.min_users = 1;
  CHECK(learn(profile_with(learn_rule()), both, owner_allows).changes.size() == 1);
  CHECK(contributors_text(pool(both)[0]) == "2 jobs (j1, j2) of 1 user (alice)");
}

TEST_CASE("learn: a rule without calibration evidence is judged against the journal's NCCL default",
          "[learn]") {
  profiles::Rule by_hand = learn_rule();
  by_hand.busbw_gbps.reset();
  by_hand.default_busbw_gbps.reset();
  const auto slow = files({learn_row(Algorithm::ring, Protocol::ll, 3 * kLearnDefaultUs)});
  // Without the journal there is nothing to compare with: the rule stays.
  CHECK(learn(profile_with(by_hand), slow, {}).changes.empty());
  // The calibration journal measured NCCL's own choice at 1 MiB on 2x16 at 100 GB/s.
  JournalRecord d;
  d.setting.id = "default";
  d.scale = {2, 16};
  d.source = "simulated";
  d.measurement.request.collective = Collective::allreduce;
  d.measurement.request.bytes = 1 << 20;
  d.measurement.busbw_gbps = 100.0;
  JournalRecord elsewhere = d;
  elsewhere.scale = {1, 8};  // another shape says nothing of this one
  elsewhere.measurement.busbw_gbps = 1.0;
  const std::vector<JournalRecord> journal = {elsewhere, d};
  auto result = learn(profile_with(by_hand), slow, {}, calibration_defaults(journal));
  REQUIRE(result.changes.size() == 1);
  CHECK(result.changes[0].kind == LearnChange::Kind::dropped);
  // As fast as NCCL's default was: stays.
  CHECK(learn(profile_with(by_hand),
              files({learn_row(Algorithm::ring, Protocol::ll, 1.01 * kLearnDefaultUs)}), {},
              calibration_defaults(journal))
            .changes.empty());
}

namespace {

// Telemetry of the profile `trusted()` accepts: digest 0123456789abcdef, NCCL 2.28.
profiles::Telemetry good_telemetry() {
  profiles::Telemetry t;
  t.digest = "0123456789abcdef";
  t.cluster = "c";
  t.nccl_version = "2.28.9";
  t.job = "j1";
  t.rows = {learn_row(Algorithm::ring, Protocol::ll, 100.0)};
  return t;
}

TelemetryTrust trusted(const profiles::Profile& p) {
  TelemetryTrust t;
  t.cluster = "c";
  t.nccl_version = "2.28.9";
  t.known_digest = [](std::string_view d) { return d == "0123456789abcdef"; };
  t.profile = &p;
  return t;
}

std::string refusal(const TelemetryRead& read, const std::string& name) {
  for (const auto& r : read.refused)
    if (r.file.filename() == name) return r.why;
  return "";
}

}  // namespace

TEST_CASE("learn: telemetry files are read whole or refused naming the file and line", "[learn]") {
  TempDir dir;
  const auto p = profile_with(learn_rule());
  profiles::Telemetry t = good_telemetry();
  const std::string whole = profiles::format_telemetry(t);
  write_file_atomically(dir.path() / "a.telemetry", whole);
  write_file_atomically(dir.path() / ".a.telemetry.tmp.XYZ", whole.substr(0, 40));  // an interrupted write
  t.cluster = "other";
  write_file_atomically(dir.path() / "b.telemetry", profiles::format_telemetry(t));
  auto read = read_telemetry(dir.path(), trusted(p));
  REQUIRE(read.files.size() == 1);
  CHECK(read.files[0].file.filename() == "a.telemetry");
  CHECK_FALSE(read.files[0].user.empty());
  CHECK(read.refused.empty());
  write_file_atomically(dir.path() / "torn.telemetry", whole.substr(0, whole.size() - 8));
  read = read_telemetry(dir.path(), trusted(p));
  CHECK(read.files.size() == 1);  // the rest is still read: one bad file does not stop learn
  CHECK_THAT(refusal(read, "torn.telemetry"), Catch::StartsWith("line 11: ") && Catch::Contains("cut short"));
}

TEST_CASE("learn: planted files are refused, not followed, waited on or counted twice", "[learn][trust]") {
  TempDir dir;
  const auto p = profile_with(learn_rule());
  const std::string whole = profiles::format_telemetry(good_telemetry());
  write_file_atomically(dir.path() / "a.telemetry", whole);
  std::filesystem::create_symlink(dir.path() / "a.telemetry", dir.path() / "link.telemetry");
  std::filesystem::create_symlink("/dev/zero", dir.path() / "zero.telemetry");
  REQUIRE(::mkfifo((dir.path() / "fifo.telemetry").c_str(), 0644) == 0);
  std::filesystem::create_hard_link(dir.path() / "a.telemetry", dir.path() / "again.telemetry");
  write_file_atomically(dir.path() / "open.telemetry", whole);
  std::filesystem::permissions(dir.path() / "open.telemetry", std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  write_file_atomically(dir.path() / "big.telemetry", whole + std::string(profiles::kMaxTelemetryBytes, '#'));
  const auto read = read_telemetry(dir.path(), trusted(p));
  REQUIRE(read.files.size() == 1);  // a.telemetry, once (again.telemetry is the same file)
  CHECK_THAT(refusal(read, "link.telemetry"), Catch::Contains("symbolic link"));
  CHECK_THAT(refusal(read, "zero.telemetry"), Catch::Contains("symbolic link"));
  CHECK_THAT(refusal(read, "fifo.telemetry"), Catch::Contains("FIFO"));
  CHECK_THAT(refusal(read, "open.telemetry"), Catch::Contains("mode 0646"));
  CHECK_THAT(refusal(read, "big.telemetry"), Catch::Contains("expected at most 262144 bytes"));
}

TEST_CASE("learn: telemetry of another profile version or NCCL, or with implausible times, is refused",
          "[learn][trust]") {
  TempDir dir;
  const auto p = profile_with(learn_rule());
  auto write = [&](const std::string& name, const profiles::Telemetry& t) {
    write_file_atomically(dir.path() / name, profiles::format_telemetry(t));
  };
  profiles::Telemetry t = good_telemetry();
  write("good.telemetry", t);
  t.digest = "0000000000000000";
  write("zero-digest.telemetry", t);
  t = good_telemetry();
  t.nccl_version = "2.29.7";
  write("other-nccl.telemetry", t);
  t = good_telemetry();
  t.rows[0] = learn_row(Algorithm::ring, Protocol::ll, 0.001);  // 1 MiB in 1 ns: beyond any fabric
  write("too-fast.telemetry", t);
  t = good_telemetry();
  t.rows[0] =
      learn_row(Algorithm::ring, Protocol::ll, kLearnDefaultUs / 3);  // 300 GB/s where calibration saw 110
  write("faster-than-calibrated.telemetry", t);
  const auto read = read_telemetry(dir.path(), trusted(p));
  REQUIRE(read.files.size() == 1);
  CHECK(read.files[0].file.filename() == "good.telemetry");
  CHECK_THAT(refusal(read, "zero-digest.telemetry"), Catch::Contains("found digest 0000000000000000"));
  CHECK_THAT(refusal(read, "other-nccl.telemetry"), Catch::Contains("expected telemetry of NCCL 2.28"));
  CHECK_THAT(refusal(read, "too-fast.telemetry"), Catch::Contains("beyond any fabric"));
  CHECK_THAT(refusal(read, "faster-than-calibrated.telemetry"),
             Catch::Contains("times the best the calibration measured"));
}

TEST_CASE("telemetry rows: the writer leaves out and the reader refuses what no row can be", "[learn]") {
  profiles::Telemetry t = good_telemetry();
  auto bad = [&](auto change) {
    auto r = learn_row(Algorithm::ring, Protocol::ll, 100.0);
    change(r);
    return r;
  };
  const std::vector<profiles::TelemetryRow> rows = {
      bad([](auto& r) { r.nodes = 0; }),                           // NCCL passed 0 nodes
      bad([](auto& r) { r.nodes = 32; }),                          // more nodes than ranks
      bad([](auto& r) { r.max_us = 1e308; }),                      // a time no collective takes
      bad([](auto& r) { r.p25_us = r.p75_us * 2; }),               // quantiles out of order
      bad([](auto& r) { r.mean_bytes = 8; }),                      // a size outside its bucket
      bad([](auto& r) { r.collective = Collective::broadcast; }),  // Ring/LL... allowed; tree is not:
      bad([](auto& r) { r.collective = Collective::broadcast, r.algorithm = Algorithm::tree; })};
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    const bool valid = i == 5;
    CHECK(profiles::row_problem(rows[i]).has_value() == !valid);
    t.rows = {learn_row(Algorithm::ring, Protocol::ll, 100.0), rows[i]};
    const std::string text = profiles::format_telemetry(t);
    const auto back = profiles::parse_telemetry(text, "t");
    CHECK(back.rows.size() == (valid ? 2u : 1u));  // written without it, and the drop counted
    CHECK(back.dropped == (valid ? 0u : 1u));
  }
  // A row the writer would never write, planted by hand, is refused naming the line.
  t.rows = {learn_row(Algorithm::ring, Protocol::ll, 100.0)};
  std::string text = profiles::format_telemetry(t);
  const size_t at = text.find("row 2 16 8");
  REQUIRE(at != std::string::npos);
  text.replace(at, 10, "row 0 16 0");
  CHECK_THROWS_WITH(profiles::parse_telemetry(text, "t"),
                    Catch::Contains("expected a shape with 1 <= nodes"));
}
