#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <set>

#include "calibrate/tune.hpp"
#include "common/input_error.hpp"
#include "search/derive.hpp"
#include "search/search_space.hpp"
#include "search/strategy.hpp"
#include "support/fake_runner.hpp"
#include "support/manual_clock.hpp"
#include "support/temp_dir.hpp"
#include "tests/search/journal_records.hpp"

namespace fs = std::filesystem;
using namespace autotune::search;
using namespace autotune::calibrate;
using namespace autotune::nccl;
using namespace autotune::runners;
using autotune::search::testing::FakeCluster;
using autotune::search::testing::FakeRunner;
using autotune::test::ManualClock;

using autotune::search::test::kRingLL;
using autotune::search::test::kRingSimple;
using autotune::search::test::rec;
using autotune::test::TempDir;

namespace {

Measurement ok(Collective c, uint64_t bytes, Candidate cand, std::vector<double> times,
               std::optional<Algorithm> used_a = {}, std::optional<Protocol> used_p = {}) {
  Measurement m;
  m.request = {c, bytes, cand, static_cast<int>(times.size())};
  m.times_us = times;
  m.used_algorithm = used_a ? used_a : cand.algorithm;
  m.used_protocol = used_p ? used_p : cand.protocol;
  return m;
}

// Total true busbw over the grid of a profile's decisions (rule where one matches, else NCCL's default).
double busbw_sum(const FakeCluster& fc, const std::vector<autotune::profiles::Rule>& rules,
                 const std::vector<Collective>& cs, const std::vector<uint64_t>& sizes) {
  double sum = 0;
  for (Collective c : cs)
    for (uint64_t b : sizes) {
      Choice ch = fc.nccl_default(c, b);
      for (const auto& r : rules)
        if (r.collective == c && r.min_bytes <= b && b <= r.max_bytes)
          ch = {r.algorithm, r.protocol, r.channels};
      double t = fc.time_us(c, b, ch.algorithm, ch.protocol);
      sum += static_cast<double>(b) / (t * 1e3) * autotune::nccl::bus_bandwidth_factor(c, fc.ranks);
    }
  return sum;
}

TuneOptions options_for(const fs::path& journal, const std::string& strategy) {
  TuneOptions o;
  o.space.collectives = {Collective::allreduce, Collective::allgather, Collective::reducescatter,
                         Collective::broadcast};
  o.space.min_bytes = 8;
  o.space.max_bytes = 8ull << 30;
  o.space.scales = {{1, 8}};
  o.space.settings = {{"default", {}}};
  o.strategy = strategy;
  o.journal = journal;
  o.header.source = "simulated";
  o.header.cluster = "fake";
  return o;
}

}  // namespace

TEST_CASE("search space: x2 size grid, candidates NCCL allows per collective, option checks") {
  auto grid = size_grid(8, 8ull << 30);
  REQUIRE(grid.size() == 31);
  CHECK(grid.front() == 8);
  CHECK(grid.back() == 8ull << 30);
  CHECK(size_grid(8, 100) == std::vector<uint64_t>{8, 16, 32, 64, 100});
  CHECK(size_grid(64, 64) == std::vector<uint64_t>{64});

  SearchSpaceOptions o;
  o.scales = {{1, 8}};
  o.settings = {{"default", {}}};
  o.channels = {4, 8};
  SearchSpace s = build_search_space(o);
  REQUIRE(s.collectives.size() == 5);
  for (const auto& cs : s.collectives) {
    for (const auto& cand : cs.candidates) {
      CHECK(autotune::nccl::is_allowed(cs.collective, *cand.algorithm, *cand.protocol));
      CHECK((cand.channels == 4 || cand.channels == 8));
    }
    if (cs.collective == Collective::broadcast)
      CHECK(cs.candidates.size() == 3 * 2);  // ring x 3 protocols x 2
  }
  o.algorithms = std::set<Algorithm>{Algorithm::ring};
  o.channels = {};
  s = build_search_space(o);
  for (const auto& cs : s.collectives) CHECK(cs.candidates.size() == 3);

  o.min_bytes = 100, o.max_bytes = 10;
  CHECK_THROWS_AS(build_search_space(o), autotune::InputError);
  o.min_bytes = 8, o.max_bytes = 16;
  o.settings = {{"a", {}}, {"a", {{"NCCL_CROSS_NIC", "1"}}}};
  CHECK_THROWS_AS(build_search_space(o), autotune::InputError);
  CHECK_THROWS_AS(make_strategy("greedy"), autotune::InputError);
}

TEST_CASE("derive: a rule only beyond the threshold and the noise") {
  const Collective c = Collective::allreduce;
  std::vector<JournalRecord> records = {
      // 1 KiB: ring/ll clearly 20% faster than the default (tree/ll) -> rule
      rec(ok(c, 1024, {}, {12, 12.1, 11.9, 12.2, 12}, Algorithm::tree, Protocol::ll)),
      rec(ok(c, 1024, kRingLL, {10, 10.1, 9.9, 10, 10.05})),
      // 2 KiB: 2% faster -> below the 3% threshold
      rec(ok(c, 2048, {}, {10.2, 10.2, 10.2, 10.2, 10.2}, Algorithm::tree, Protocol::ll)),
      rec(ok(c, 2048, kRingLL, {10, 10, 10, 10, 10})),
      // 4 KiB: 10% faster by median but the spreads overlap -> no rule
      rec(ok(c, 4096, {}, {11, 8, 14, 11, 9}, Algorithm::tree, Protocol::ll)),
      rec(ok(c, 4096, kRingLL, {10, 7, 13, 10, 8})),
  };
  Derivation d = derive(records, {0.03});
  REQUIRE(d.rules.size() == 1);
  const auto& r = d.rules[0].rule;
  CHECK(r.collective == c);
  CHECK(r.algorithm == Algorithm::ring);
  CHECK(r.protocol == Protocol::ll);
  CHECK(r.min_bytes == 1024);
  // The gain falls from 20% at 1 KiB to 2% at 2 KiB: interpolated in log size, it meets the 3% threshold
  // just below 2 KiB, so the edge sits there rather than halfway.
  CHECK(r.max_bytes > 1900);
  CHECK(r.max_bytes < 2048);
  CHECK(r.nodes->min == 1);
  CHECK(r.ranks->max == 8);
  CHECK(*r.samples == 5);
  CHECK(*r.busbw_gbps > *r.default_busbw_gbps);
  // The evidence: the gain of the one measured size (12 / 10 - 1) and its interval at the strict level.
  REQUIRE(r.gain);
  CHECK(r.gain->gain == Approx(0.2).margin(0.01));
  CHECK(r.gain->low > 0.03);
  CHECK(r.gain->low <= r.gain->gain);
  CHECK(r.gain->high >= r.gain->gain);
  CHECK(r.gain->confidence == 0.98);
  CHECK(r.gain->sizes == 1);
  CHECK(r.gain->default_samples == 5);

  // A higher threshold removes it.
  CHECK(derive(records, {0.25}).rules.empty());
}

TEST_CASE("derive: the winner equal to NCCL's own choice, and failed candidates, never make rules") {
  const Collective c = Collective::allgather;
  std::vector<JournalRecord> records = {
      rec(ok(c, 1 << 20, {}, {100, 100, 100}, Algorithm::ring, Protocol::simple)),
      // Same operation as the default, measured faster by chance: not a rule.
      rec(ok(c, 1 << 20, kRingSimple, {80, 80, 80})),
  };
  Measurement wrong;
  wrong.request = {c, 1 << 20, {Algorithm::ring, Protocol::ll128, 0}, 3};
  wrong.outcome = Outcome::wrong_result;
  wrong.detail = "7 wrong elements";
  records.push_back(rec(wrong));
  // The same candidate fast and ok at another size: still banned for this collective.
  records.push_back(rec(ok(c, 2 << 20, {}, {200, 200, 200}, Algorithm::ring, Protocol::simple)));
  records.push_back(rec(ok(c, 2 << 20, {Algorithm::ring, Protocol::ll128, 0}, {100, 100, 100})));
  Derivation d = derive(records, {0.03});
  CHECK(d.rules.empty());
  REQUIRE(d.failed.size() == 1);
  CHECK(d.failed[0].outcome == Outcome::wrong_result);
  CHECK(d.failed[0].detail == "7 wrong elements");
  CHECK(d.failed[0].sizes == std::vector<uint64_t>{1 << 20});
}

TEST_CASE("derive: neighbouring sizes with the same decision merge into one range") {
  const Collective c = Collective::broadcast;
  std::vector<JournalRecord> records;
  for (uint64_t b = 1024; b <= 64 * 1024; b *= 2) {
    bool ll_wins = b <= 8192;
    records.push_back(rec(ok(c, b, {}, {20, 20, 20}, Algorithm::ring, Protocol::simple)));
    records.push_back(
        rec(ok(c, b, kRingLL, ll_wins ? std::vector<double>{10, 10, 10} : std::vector<double>{40, 40, 40})));
  }
  Derivation d = derive(records, {0.03});
  REQUIRE(d.rules.size() == 1);
  CHECK(d.rules[0].rule.min_bytes == 1024);
  // From 2x faster at 8 KiB to 2x slower at 16 KiB: linear in log size, the time ratio falls to the
  // threshold's 1.03 a fraction (ln 2 - ln 1.03) / (ln 2 - ln 0.5) of the way from 8 KiB to 16 KiB.
  const double at = (std::log(2.0) - std::log(1.03)) / (std::log(2.0) - std::log(0.5));
  const double expected = 8192 * std::pow(2.0, at);
  CHECK(std::fabs(static_cast<double>(d.rules[0].rule.max_bytes) - expected) <= 1.0);
  CHECK(d.rules[0].measured_sizes == 4);
  CHECK(d.rules[0].rule.gain->confidence == 0.90);
}

TEST_CASE("derive: the process-wide setting is kept only when it beats the default by the threshold") {
  const Collective c = Collective::allreduce;
  auto records_with = [&](double other_time) {
    std::vector<JournalRecord> r;
    for (uint64_t b : {1ull << 20, 1ull << 30}) {
      double scale = static_cast<double>(b >> 20);
      r.push_back(
          rec(ok(c, b, {}, {100 * scale, 100 * scale, 100 * scale}, Algorithm::ring, Protocol::simple)));
      r.push_back(rec(ok(c, b, {}, {other_time * scale, other_time * scale, other_time * scale},
                         Algorithm::ring, Protocol::simple),
                      "cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}));
    }
    return r;
  };
  auto fast = records_with(90);
  Derivation d = derive(fast, {0.03});
  CHECK(d.setting.id == "cross_nic=1");
  CHECK(d.env == std::map<std::string, std::string>{{"NCCL_CROSS_NIC", "1"}});
  REQUIRE(d.scores.size() == 2);
  CHECK(d.scores[0].setting.id == "cross_nic=1");

  auto close = records_with(99);
  d = derive(close, {0.03});
  CHECK(d.setting.id == "default");
  CHECK(d.env.empty());
  REQUIRE_FALSE(d.notes.empty());
  CHECK_THAT(d.notes[0], Catch::Contains("below the threshold"));
}

TEST_CASE("derive: nothing to derive from is an input error") {
  std::vector<JournalRecord> none;
  CHECK_THROWS_AS(derive(none, {}), autotune::InputError);
}

TEST_CASE("exhaustive measures every candidate at every size, adaptive reaches its answer with far fewer") {
  FakeCluster fc;
  const TempDir tmp("strategies");
  const fs::path dir = tmp.path();
  std::map<std::string, TuneResult> results;
  std::map<std::string, size_t> asked;
  for (std::string strategy : {"exhaustive", "adaptive"}) {
    std::vector<MeasureRequest> log;
    TuneOptions o = options_for(dir / (strategy + ".jsonl"), strategy);
    auto r = tune(
        o, [&](const ProcessSetting&, const Scale&) { return std::make_unique<FakeRunner>(fc, -1, &log); });
    asked[strategy] = log.size();
    CHECK(r.measured == log.size());
    results[strategy] = std::move(r);
  }
  const auto& ex = results["exhaustive"];
  uint64_t expect = 0;
  for (const auto& cs : ex.plan.space.collectives) expect += (cs.candidates.size() + 1) * 31;
  CHECK(ex.plan.measurements == expect);
  // The whole grid once, then repetitions only where an answer was in doubt (a few points).
  CHECK(asked["exhaustive"] >= expect);
  CHECK(asked["exhaustive"] < expect + expect / 10);

  // The exhaustive rules capture what the fake NCCL gets wrong: NVLS for large allreduce, ring/LL128 earlier.
  bool nvls_rule = false, ll128_rule = false;
  for (const auto& r : ex.profile.rules) {
    nvls_rule = nvls_rule || (r.collective == Collective::allreduce && r.algorithm == Algorithm::nvls &&
                              r.max_bytes == 8ull << 30);
    ll128_rule = ll128_rule || r.protocol == Protocol::ll128;
  }
  CHECK(nvls_rule);
  CHECK(ll128_rule);
  for (const auto& r : ex.profile.rules)
    if (r.collective == Collective::reducescatter) CHECK(r.protocol != Protocol::ll128);
  bool rs_ll128_failed = false;
  for (const auto& f : ex.derivation.failed)
    rs_ll128_failed =
        rs_ll128_failed || (f.collective == Collective::reducescatter &&
                            f.candidate.protocol == Protocol::ll128 && f.outcome == Outcome::wrong_result);
  CHECK(rs_ll128_failed);

  std::vector<Collective> cs = {Collective::allreduce, Collective::allgather, Collective::reducescatter,
                                Collective::broadcast};
  auto sizes = size_grid(8, 8ull << 30);
  double none = busbw_sum(fc, {}, cs, sizes);
  double ex_sum = busbw_sum(fc, ex.profile.rules, cs, sizes);
  double ad_sum = busbw_sum(fc, results["adaptive"].profile.rules, cs, sizes);
  CHECK(ex_sum > none * 1.05);  // the profile makes the fake cluster faster
  double loss = (ex_sum - ad_sum) / ex_sum;
  double ratio = static_cast<double>(asked["adaptive"]) / static_cast<double>(asked["exhaustive"]);
  INFO("adaptive busbw loss " << loss * 100 << "%, measurements " << ratio * 100 << "%");
  CHECK(loss < 0.01);
  CHECK(ratio < 0.30);
  if (loss < 0.01) fs::remove_all(dir);
}

TEST_CASE("tune: a run killed midway resumes from its journal to the same profile, without re-measuring") {
  FakeCluster fc;
  const TempDir tmp("resume");
  const fs::path dir = tmp.path();
  for (std::string strategy : {"exhaustive", "adaptive"}) {
    TuneOptions whole = options_for(dir / (strategy + "-whole.jsonl"), strategy);
    auto reference =
        tune(whole, [&](const ProcessSetting&, const Scale&) { return std::make_unique<FakeRunner>(fc); });

    TuneOptions o = options_for(dir / (strategy + "-killed.jsonl"), strategy);
    // The runner dies after 10 batches: the job fails, the journal keeps what was measured.
    auto first =
        tune(o, [&](const ProcessSetting&, const Scale&) { return std::make_unique<FakeRunner>(fc, 10); });
    REQUIRE(first.jobs.size() == 1);
    CHECK(first.jobs[0].failed);
    CHECK_THAT(first.jobs[0].detail, Catch::Contains("fake runner died"));
    uint64_t measured_before = first.measured;
    CHECK(measured_before > 0);

    o.resume = true;
    std::vector<MeasureRequest> log;
    auto second = tune(
        o, [&](const ProcessSetting&, const Scale&) { return std::make_unique<FakeRunner>(fc, -1, &log); });
    CHECK(second.replayed == measured_before);
    CHECK(log.size() + measured_before == reference.measured);
    REQUIRE(second.profile.rules.size() == reference.profile.rules.size());
    for (size_t i = 0; i < reference.profile.rules.size(); ++i) {
      const auto& a = reference.profile.rules[i];
      const auto& b = second.profile.rules[i];
      CHECK(a.collective == b.collective);
      CHECK(a.min_bytes == b.min_bytes);
      CHECK(a.max_bytes == b.max_bytes);
      CHECK(a.algorithm == b.algorithm);
      CHECK(a.protocol == b.protocol);
    }
    // One header, however many runs appended.
    int headers = 0;
    for (const auto& e : read_journal(o.journal)) headers += e.header() ? 1 : 0;
    CHECK(headers == 1);

    // Resuming a complete journal measures nothing.
    auto third = tune(o, [&](const ProcessSetting&, const Scale&) -> std::unique_ptr<Runner> {
      throw std::runtime_error("must not be needed");
    });
    CHECK(third.measured == 0);
    CHECK(third.profile.rules.size() == reference.profile.rules.size());
  }
  fs::remove_all(dir);
}

TEST_CASE("tune: each scale measures its own collectives, the plan counts only those") {
  FakeCluster fc;
  const TempDir tmp("scale-collectives");
  TuneOptions o = options_for(tmp.path() / "j.jsonl", "exhaustive");
  o.space.max_bytes = 1 << 16;
  o.space.scales = {{1, 8}, {2, 2}};
  // A layout's pipeline and embedding groups (2x1) all-reduce only; the tensor groups (1x8) all four.
  o.space.scale_collectives = {{{2, 2}, {Collective::allreduce}}};
  const uint64_t planned = plan_tune(o).measurements;
  std::vector<MeasureRequest> log;
  std::vector<Scale> asked;
  auto r = tune(o, [&](const ProcessSetting&, const Scale& sc) {
    asked.push_back(sc);
    return std::make_unique<FakeRunner>(fc, -1, &log);
  });
  CHECK(asked == std::vector<Scale>{{1, 8}, {2, 2}});
  CHECK(r.measured == planned);
  std::set<std::pair<Scale, Collective>> seen;
  for (const auto& e : read_journal(o.journal))
    if (e.record()) seen.insert({e.record()->scale, e.record()->measurement.request.collective});
  CHECK(seen.count({{2, 2}, Collective::allreduce}) == 1);
  for (Collective c : {Collective::allgather, Collective::reducescatter, Collective::broadcast}) {
    CHECK(seen.count({{1, 8}, c}) == 1);
    CHECK(seen.count({{2, 2}, c}) == 0);
  }
  auto all = o;
  all.space.scale_collectives.clear();
  CHECK(plan_tune(all).measurements > planned);
  // A scale's collective the calibration does not sweep is an input error.
  o.space.scale_collectives = {{{2, 2}, {Collective::reduce}}};
  CHECK_THROWS_WITH(plan_tune(o), Catch::Contains("scale 2x1: expected collectives among those calibrated"));
}

TEST_CASE("tune: resuming with other parameters is refused") {
  FakeCluster fc;
  const TempDir tmp("resume-mismatch");
  const fs::path dir = tmp.path();
  TuneOptions o = options_for(dir / "j.jsonl", "exhaustive");
  o.space.max_bytes = 1 << 20;
  tune(o, [&](const ProcessSetting&, const Scale&) { return std::make_unique<FakeRunner>(fc); });
  o.resume = true;
  o.space.max_bytes = 1 << 22;
  CHECK_THROWS_AS(
      tune(o, [&](const ProcessSetting&, const Scale&) { return std::make_unique<FakeRunner>(fc); }),
      autotune::InputError);
  fs::remove_all(dir);
}

TEST_CASE(
    "tune: a failing job is reported and the others go on, the [env] choice uses the setting that won") {
  const TempDir tmp("jobs");
  const fs::path dir = tmp.path();
  TuneOptions o = options_for(dir / "j.jsonl", "adaptive");
  o.space.collectives = {Collective::allreduce};
  o.space.scales = {{2, 16}};  // network settings change communicators across nodes only
  o.space.settings = {{"default", {}},
                      {"hca=mlx5_0", {{"NCCL_IB_HCA", "=mlx5_0"}}},
                      {"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}}};
  auto r = tune(o, [&](const ProcessSetting& s, const Scale&) -> std::unique_ptr<Runner> {
    if (s.id == "hca=mlx5_0") throw std::runtime_error("srun: error: no such device");
    FakeCluster fc;
    fc.speed = s.id == "cross_nic=1" ? 1.2 : 1.0;
    return std::make_unique<FakeRunner>(fc);
  });
  REQUIRE(r.jobs.size() == 3);
  CHECK_FALSE(r.jobs[0].failed);
  CHECK(r.jobs[1].failed);
  CHECK_THAT(r.jobs[1].detail, Catch::Contains("no such device"));
  CHECK_FALSE(r.jobs[2].failed);
  CHECK(r.derivation.setting.id == "cross_nic=1");
  CHECK(r.profile.env == std::map<std::string, std::string>{{"NCCL_CROSS_NIC", "1"}});
  auto journal = load_journal(o.journal);
  bool failed_event = false;
  for (const auto& e : journal.job_events)
    failed_event = failed_event || (e.job == "hca=mlx5_0" && e.status == "failed");
  CHECK(failed_event);
  fs::remove_all(dir);
}

TEST_CASE(
    "tune: a one-node shape is measured once for the network settings, journaled where it came from, same "
    "profile") {
  const TempDir tmp("one-node");
  TuneOptions o = options_for(tmp.path() / "j.jsonl", "adaptive");
  o.space.collectives = {Collective::allreduce};
  o.space.scales = {{1, 8}, {2, 16}};
  o.space.settings = {
      {"default", {}}, {"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}}, {"nvls=0", {{"NCCL_NVLS_ENABLE", "0"}}}};
  std::map<std::pair<std::string, int>, int> runners_made;  // (setting, nodes)
  auto make = [&](const ProcessSetting& s, const Scale& sc) -> std::unique_ptr<Runner> {
    ++runners_made[{s.id, sc.nodes}];
    return std::make_unique<FakeRunner>(FakeCluster{});
  };
  const auto r = tune(o, make);
  // NCCL_CROSS_NIC cannot change one node: its 1x8 is the default job's; NCCL_NVLS_ENABLE can, and is
  // measured.
  CHECK(runners_made.count({"cross_nic=1", 1}) == 0);
  CHECK(runners_made[{"nvls=0", 1}] == 1);
  CHECK(runners_made[{"cross_nic=1", 2}] == 1);
  const auto journal = load_journal(o.journal);
  size_t shared = 0, default_one_node = 0;
  for (const auto& rec : journal.records) {
    if (rec.scale.nodes != 1) continue;
    if (rec.setting.id == "default") ++default_one_node;
    if (rec.setting.id == "cross_nic=1") {
      CHECK(rec.measured_under == "default");
      ++shared;
    } else {
      CHECK(rec.measured_under.empty());
    }
  }
  CHECK(shared == default_one_node);
  REQUIRE(r.jobs.size() == 6);
  CHECK(r.jobs[2].shared == shared);
  CHECK(r.jobs[2].measured == 0);
  CHECK(r.measured + shared == journal.records.size());
  // The plan counts what is measured: the shared shape once less.
  CHECK(r.plan.scales.front().jobs == 2);
  CHECK(r.plan.scales.back().jobs == 3);
  // The same profile as when every setting measures its own one-node shape (the fake is noise-seeded by
  // request, so equal measurements give equal rules).
  TuneOptions each = o;
  each.journal = tmp.path() / "each.jsonl";
  each.space.settings = {{"default", {}}, {"nvls=0", {{"NCCL_NVLS_ENABLE", "0"}}}};
  const auto without = tune(each, make);
  auto decisions = [](const autotune::profiles::Profile& p) {
    std::vector<std::tuple<int, uint64_t, uint64_t, int, int, std::optional<double>>> out;
    for (const auto& rule : p.rules)
      out.emplace_back(static_cast<int>(rule.collective), rule.min_bytes, rule.max_bytes,
                       static_cast<int>(rule.algorithm), static_cast<int>(rule.protocol), rule.busbw_gbps);
    return out;
  };
  CHECK_FALSE(decisions(r.profile).empty());
  CHECK(decisions(r.profile) == decisions(without.profile));
  CHECK(r.profile.env == without.profile.env);
}

// A runner whose every batch takes 20 ms of `clock`: budgets run out in no real time.
struct SlowRunner : FakeRunner {
  SlowRunner(const FakeCluster& cluster, const ManualClock& clock) : FakeRunner(cluster), clock_(clock) {}
  std::vector<Measurement> run(std::span<const MeasureRequest> batch) override {
    clock_.advance(std::chrono::milliseconds(20));
    return FakeRunner::run(batch);
  }
  const ManualClock& clock_;
};

TEST_CASE("tune: the budget stops measuring and says what was skipped") {
  const TempDir tmp("budget");
  const fs::path dir = tmp.path();
  TuneOptions o = options_for(dir / "j.jsonl", "exhaustive");
  o.budget = std::chrono::duration<double>(0.2);
  const ManualClock clock;  // each batch takes 20 ms of it
  o.clock = &clock;
  auto slow = [&](const ProcessSetting&, const Scale&) {
    return std::make_unique<SlowRunner>(FakeCluster{}, clock);
  };
  // Collective by collective, the budget ends before the last ones are measured at any size: nothing decided
  // there, so no profile (it would replace the store's rules with NCCL's choice unjudged).
  CHECK_THROWS_WITH(tune(o, slow), Catch::Contains("the budget ended before") &&
                                       Catch::Contains("broadcast at 1x8") &&
                                       Catch::Contains("no profile written"));
  const auto kept = load_journal(o.journal);
  CHECK_FALSE(kept.records.empty());  // what was measured is kept for --resume
  // With the budget cut on the last collective only, a profile is written and says what was skipped.
  o.space.collectives = {Collective::allreduce};
  o.budget = std::chrono::duration<double>(0.3);  // some 15 of the 31 sizes at 20 ms each
  auto r = tune(o, slow);
  REQUIRE(r.jobs.size() == 1);
  CHECK_FALSE(r.jobs[0].skipped.empty());
  CHECK(r.measured < r.plan.measurements);
  fs::remove_all(dir);
}

TEST_CASE("tune: a budget that decides nothing writes no profile") {
  const TempDir tmp("budget-nothing");
  TuneOptions o = options_for(tmp.path() / "j.jsonl", "adaptive");
  o.budget = std::chrono::duration<double>(1e-6);
  const ManualClock clock;
  o.clock = &clock;
  CHECK_THROWS_WITH(tune(o, [&](const ProcessSetting&,
                                const Scale&) { return std::make_unique<SlowRunner>(FakeCluster{}, clock); }),
                    Catch::Contains("the budget ended before allreduce at 1x8 (8 ranks), allgather at 1x8"));
}

TEST_CASE("tune: with a budget NCCL's defaults are measured first and may use all of it") {
  const TempDir tmp("budget-default");
  const fs::path dir = tmp.path();
  TuneOptions o = options_for(dir / "j.jsonl", "exhaustive");
  // Listed last, measured first.
  o.space.settings = {{"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}}, {"default", {}}};
  o.budget = std::chrono::duration<double>(1.0);
  const ManualClock clock;
  o.clock = &clock;
  // The budget ends inside the default job (collective by collective, broadcast is never reached): no
  // profile, and the journal shows the order.
  CHECK_THROWS_WITH(tune(o, [&](const ProcessSetting&,
                                const Scale&) { return std::make_unique<SlowRunner>(FakeCluster{}, clock); }),
                    Catch::Contains("the budget ended before"));
  size_t by_default = 0, by_other = 0;
  for (const auto& r : load_journal(o.journal).records)
    if (r.measured_under.empty()) (r.setting.id == "default" ? by_default : by_other)++;
  CHECK(by_default > 0);
  // The default job used the budget it was given: nothing was left for the other setting to measure (its
  // one-node shape is the default job's, shared: measured_under).
  CHECK(by_other == 0);
  fs::remove_all(dir);
}

TEST_CASE("tune: re-deriving from a journal with another threshold measures nothing") {
  FakeCluster fc;
  const TempDir tmp("from-journal");
  const fs::path dir = tmp.path();
  TuneOptions o = options_for(dir / "j.jsonl", "exhaustive");
  auto r = tune(o, [&](const ProcessSetting&, const Scale&) { return std::make_unique<FakeRunner>(fc); });
  auto same = tune_from_journal(o.journal, {0.03});
  CHECK(same.profile.rules.size() == r.profile.rules.size());
  CHECK_FALSE(r.profile.rules.empty());
  auto strict = tune_from_journal(o.journal, {10.0});
  CHECK(strict.profile.rules.empty());
  CHECK(strict.profile.provenance.source == autotune::profiles::Source::simulated);
  fs::remove_all(dir);
}
