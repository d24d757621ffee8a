// Progress inside a job: paced on the clock seam (a terminal line at most every second, a batch-log line
// every ten), machine-readable for logs, naming the size and candidate being measured; and the orchestrator
// picking its workers' newest progress line out of their logs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "calibrate/orchestrator.hpp"
#include "calibrate/progress_report.hpp"
#include "calibrate/tune.hpp"
#include "support/fake_runner.hpp"
#include "support/manual_clock.hpp"
#include "support/temp_dir.hpp"

using namespace autotune;
using namespace autotune::calibrate;
using autotune::test::ManualClock;
using autotune::test::TempDir;

namespace {

TuneProgress progress_at(uint64_t done, bool finished = false) {
  TuneProgress p;
  p.jobs_total = 2;
  p.job = "default at 2x8 (16 ranks)";
  p.measurements_done = done;
  p.measurements_planned = 100;
  p.elapsed_s = 12.0;
  p.remaining_s = 30.4;
  p.job_finished = finished;
  p.measuring = "allreduce 1 MiB ring/simple (+3 more)";
  return p;
}

}  // namespace

TEST_CASE("progress: a terminal line at most every second, rewritten in place, a job's end always shown") {
  ManualClock clock;
  std::vector<std::string> out;
  auto report = progress_reporter({true, 1.0, 10.0, &clock, [&](const std::string& s) { out.push_back(s); }});
  report(progress_at(1));
  report(progress_at(2));  // the same instant: not shown
  clock.advance(std::chrono::milliseconds(999));
  report(progress_at(3));
  clock.advance(std::chrono::milliseconds(2));
  report(progress_at(4));
  report(progress_at(5, true));
  REQUIRE(out.size() == 3);
  CHECK(out[0].rfind("\r\033[K", 0) == 0);
  CHECK(out[1] ==
        "\r\033[Kjob 1/2 default at 2x8 (16 ranks): 4/100 measurements, 12 s elapsed, ~30 s left, "
        "measuring allreduce 1 MiB ring/simple (+3 more)");
  CHECK(out[2].find("5/100") != std::string::npos);
}

TEST_CASE("progress: batch logs get a progress JSON line every ten seconds") {
  ManualClock clock;
  std::vector<std::string> out;
  auto report =
      progress_reporter({false, 1.0, 10.0, &clock, [&](const std::string& s) { out.push_back(s); }});
  for (int i = 0; i < 30; ++i) {  // a batch every second for 30 s
    report(progress_at(static_cast<uint64_t>(i)));
    clock.advance(std::chrono::seconds(1));
  }
  REQUIRE(out.size() == 3);  // at 0, 10 and 20 s
  REQUIRE(out[1].rfind("progress {", 0) == 0);
  CHECK(out[1].back() == '\n');
  const auto j = nlohmann::json::parse(out[1].substr(9));
  CHECK(j["done"] == 10);
  CHECK(j["planned"] == 100);
  CHECK(j["eta_s"] == 30);
  CHECK(j["measuring"] == "allreduce 1 MiB ring/simple (+3 more)");
  TuneProgress unknown = progress_at(0);
  unknown.remaining_s = -1;
  CHECK(nlohmann::json::parse(progress_line(unknown).substr(9))["eta_s"].is_null());
}

TEST_CASE("progress: tune says which size and candidate it measures and ends at what it measured") {
  const TempDir tmp("progress");
  TuneOptions o;
  o.space.collectives = {nccl::Collective::allreduce};
  o.space.min_bytes = 1 << 20;
  o.space.max_bytes = 4 << 20;
  o.space.scales = {{1, 8}};
  o.space.settings = {{"default", {}}};
  o.strategy = "exhaustive";
  o.journal = tmp.path() / "j.jsonl";
  o.header.source = "simulated";
  o.header.cluster = "fake";
  std::vector<TuneProgress> seen;
  auto r = tune(
      o,
      [](const runners::ProcessSetting&, const runners::Scale&) {
        return std::make_unique<search::testing::FakeRunner>(search::testing::FakeCluster{});
      },
      [&](const TuneProgress& p) { seen.push_back(p); });
  REQUIRE_FALSE(seen.empty());
  const bool named = std::any_of(seen.begin(), seen.end(), [](const TuneProgress& p) {
    return p.measuring.rfind("allreduce 1 MiB ", 0) == 0;
  });
  CHECK(named);
  CHECK(seen.back().job_finished);
  CHECK(seen.back().measurements_done == r.measured);
  CHECK(seen.back().measurements_planned == r.plan.measurements);
}

TEST_CASE("progress: the orchestrator reads a worker's newest complete progress line from its log") {
  const TempDir tmp("watch");
  const auto log = tmp.path() / "job0.log";
  std::ofstream(log) << "earlier run\nprogress {\"done\":1}\n";
  const auto from = std::filesystem::file_size(log);
  ManualClock clock;
  std::vector<std::string> told;
  auto tick = progress_watch(log, from, clock, 10.0, [&](const std::string& s) { told.push_back(s); });
  tick();
  CHECK(told.empty());  // nothing new, and not yet time
  std::ofstream(log, std::ios::app) << "NCCL INFO ...\nprogress {\"done\":5}\nprogress {\"done\":7}\nprog";
  clock.advance(std::chrono::seconds(10));
  tick();
  clock.advance(std::chrono::seconds(10));
  tick();  // unchanged: said once
  REQUIRE(told == std::vector<std::string>{"progress {\"done\":7}"});
  CHECK(last_progress_json("x progress {\"done\":1}\n") == std::nullopt);  // not a line of its own
  CHECK(last_progress_json("progress {\"done\":2}") == std::nullopt);      // still being written
}
