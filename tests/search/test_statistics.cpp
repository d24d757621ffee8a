// The statistics behind a rule: the gain's bootstrap interval, the stricter test for a rule on one size,
// runs that lose a weak end, no rule that repeats NCCL's own choice (channels included), rules only from
// the setting the profile exports, where repetitions are spent and where they stop (zero-width intervals,
// doubts the cap cannot settle), what adaptive leaves unmeasured, and what that buys on the simulator: five
// noise seeds of one simulated truth agree, find its real gains, and adaptive's edges sit near exhaustive's.
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <set>

#include "calibrate/tune.hpp"
#include "common/input_error.hpp"
#include "search/derive.hpp"
#include "search/gain_interval.hpp"
#include "search/repetition_rounds.hpp"
#include "search/strategy.hpp"
#include "support/fake_runner.hpp"
#include "support/temp_dir.hpp"
#include "tests/search/journal_records.hpp"
#include "tests/support/strategy_figures.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using namespace autotune::search;
using namespace autotune::measure;
using namespace autotune::calibrate;
using autotune::nccl::Algorithm;
using autotune::nccl::Collective;
using autotune::nccl::Protocol;
using autotune::runners::Candidate;
using autotune::runners::Measurement;

using autotune::search::test::kRingLL;
using autotune::search::test::kRingSimple;
using autotune::search::test::rec;
using autotune::test::TempDir;

namespace {

// Times around `center` with a relative spread: center * (1 + spread * u) for u in a fixed pattern.
std::vector<double> around(double center, double spread, int n = 5) {
  static const double pattern[] = {0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8, 0.2, -0.2, 0.9, -0.9, 0.4, -0.4};
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(center * (1.0 + spread * pattern[i % 13]));
  return out;
}

Measurement ok(Collective c, uint64_t bytes, Candidate cand, std::vector<double> times, Algorithm used_a,
               Protocol used_p, int used_channels = 0) {
  Measurement m;
  m.request = {c, bytes, cand, static_cast<int>(times.size())};
  m.times_us = std::move(times);
  m.used_algorithm = used_a;
  m.used_protocol = used_p;
  m.used_channels = used_channels;
  return m;
}

const Collective kAr = Collective::allreduce;

// NCCL's default (tree/simple) and ring/LL at one size.
std::vector<JournalRecord> size_pair(uint64_t bytes, std::vector<double> def, std::vector<double> ring_ll) {
  return {rec(ok(kAr, bytes, {}, std::move(def), Algorithm::tree, Protocol::simple)),
          rec(ok(kAr, bytes, kRingLL, std::move(ring_ll), Algorithm::ring, Protocol::ll))};
}

}  // namespace

TEST_CASE("gain interval: the same samples in any order give the same interval around the estimate") {
  const std::vector<double> def = around(100, 0.04, 7), cand = around(90, 0.04, 7);
  SamplePair pair{def, cand};
  GainInterval a = gain_interval(std::span<const SamplePair>(&pair, 1), 0.9);
  std::vector<double> def2(def.rbegin(), def.rend()), cand2 = cand;
  std::rotate(cand2.begin(), cand2.begin() + 3, cand2.end());
  SamplePair shuffled{def2, cand2};
  GainInterval b = gain_interval(std::span<const SamplePair>(&shuffled, 1), 0.9);
  CHECK(a.gain == Approx(100.0 / 90.0 - 1.0));
  CHECK(a.low == b.low);
  CHECK(a.high == b.high);
  CHECK(a.low < a.gain);
  CHECK(a.gain < a.high);
  CHECK(a.confidence == 0.9);
  // A wider confidence gives a wider interval; more samples of the same spread a narrower one.
  GainInterval wide = gain_interval(std::span<const SamplePair>(&pair, 1), 0.98);
  CHECK(wide.low <= a.low);
  CHECK(wide.high >= a.high);
  const std::vector<double> def_many = around(100, 0.04, 13 * 4), cand_many = around(90, 0.04, 13 * 4);
  SamplePair many{def_many, cand_many};
  GainInterval narrow = gain_interval(std::span<const SamplePair>(&many, 1), 0.9);
  CHECK(narrow.high - narrow.low < a.high - a.low);
  // Nothing measured on one side: nothing to say.
  SamplePair empty{def, {}};
  CHECK_FALSE(gain_interval(std::span<const SamplePair>(&empty, 1), 0.9).measured());
}

TEST_CASE("gain interval: over several sizes the gain is the geometric mean of their time ratios") {
  const std::vector<double> d1 = {100, 100, 100}, c1 = {80, 80, 80}, d2 = {50, 50, 50}, c2 = {50, 50, 50};
  std::vector<SamplePair> pairs = {{d1, c1}, {d2, c2}};
  GainInterval g = gain_interval(pairs, 0.9);
  CHECK(g.gain == Approx(std::sqrt(1.25) - 1.0));
  CHECK(g.low == Approx(g.gain));  // no spread, no doubt
  CHECK(g.high == Approx(g.gain));
  CHECK(g.beats(0.1));
  CHECK_FALSE(g.beats(0.2));
}

TEST_CASE("derive: a rule resting on one measured size needs stronger evidence than one spanning two") {
  // Ring/LL 6% faster at 1 KiB and at 2 KiB, each measured with 3% noise: together enough, alone not.
  auto one = size_pair(1024, around(106, 0.03), around(100, 0.03));
  auto two = one;
  for (auto& r : size_pair(2048, around(212, 0.03), around(200, 0.03))) two.push_back(r);
  CHECK(derive(one, {0.03}).rules.empty());
  Derivation d = derive(two, {0.03});
  REQUIRE(d.rules.size() == 1);
  CHECK(d.rules[0].measured_sizes == 2);
  CHECK(d.rules[0].rule.gain->confidence == 0.90);
  CHECK(d.rules[0].rule.gain->low > 0.03);
  // The same single size with less noise does make a rule, at the stricter level.
  Derivation tight = derive(size_pair(1024, around(106, 0.005), around(100, 0.005)), {0.03});
  REQUIRE(tight.rules.size() == 1);
  CHECK(tight.rules[0].rule.gain->confidence == 0.98);
}

TEST_CASE("derive: a run whose weak end drags its interval under the threshold loses that end") {
  // 1 KiB: 15% faster, tightly measured. 2 KiB: 4% faster by the estimate but very noisy.
  auto records = size_pair(1024, around(115, 0.002), around(100, 0.002));
  for (auto& r : size_pair(2048, around(208, 0.3), around(200, 0.3))) records.push_back(r);
  Derivation d = derive(records, {0.03});
  REQUIRE(d.rules.size() == 1);
  CHECK(d.rules[0].measured_sizes == 1);
  CHECK(d.rules[0].rule.min_bytes == 1024);
  CHECK(d.rules[0].rule.max_bytes < 2048);
}

TEST_CASE("derive: no rule forces what NCCL's default already ran, channels included") {
  const Candidate ring_ll_32{Algorithm::ring, Protocol::ll, 32},
      ring_ll_16{Algorithm::ring, Protocol::ll, 16};
  std::vector<JournalRecord> records = {
      // NCCL's default ran ring/LL on 32 channels; forcing exactly that measured 10% faster by chance.
      rec(ok(kAr, 4096, {}, around(110, 0.001), Algorithm::ring, Protocol::ll, 32)),
      rec(ok(kAr, 4096, ring_ll_32, around(100, 0.001), Algorithm::ring, Protocol::ll, 32)),
      // Ring/LL left to NCCL's channels is the same operation too.
      rec(ok(kAr, 4096, kRingLL, around(99, 0.001), Algorithm::ring, Protocol::ll, 32))};
  CHECK(derive(records, {0.03}).rules.empty());
  // Another channel count is another operation, and can be a rule.
  records.push_back(rec(ok(kAr, 4096, ring_ll_16, around(90, 0.001), Algorithm::ring, Protocol::ll, 16)));
  Derivation d = derive(records, {0.03});
  REQUIRE(d.rules.size() == 1);
  CHECK(d.rules[0].rule.channels == 16);
  // Where the runner does not report the channels NCCL used (the sweep hook on GPUs), a forced count is
  // not known to repeat the default and is judged by its time.
  MeasurementTable t;
  t.add(ok(kAr, 8192, {}, around(110, 0.001), Algorithm::ring, Protocol::ll, 0));
  CHECK(t.repeats_default(kAr, 8192, kRingLL));
  CHECK_FALSE(t.repeats_default(kAr, 8192, ring_ll_32));
}

TEST_CASE("derive: the rules always come from the setting whose [env] the profile exports") {
  // Only NCCL_CROSS_NIC=1 was measured (the default job failed or was cut): its rules go with its [env].
  std::vector<JournalRecord> records;
  for (auto& r : size_pair(1024, around(120, 0.001), around(100, 0.001)))
    records.push_back(rec(r.measurement, "cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}));
  Derivation d = derive(records, {0.03});
  CHECK(d.setting.id == "cross_nic=1");
  CHECK(d.env == std::map<std::string, std::string>{{"NCCL_CROSS_NIC", "1"}});
  CHECK(d.rules.size() == 1);
  REQUIRE_FALSE(d.notes.empty());
  CHECK_THAT(d.notes[0], Catch::Contains("not measured"));
  // With NCCL's defaults measured too and no better, neither the [env] nor the other setting's rules.
  for (auto& r : size_pair(1024, around(100, 0.001), around(101, 0.001))) records.push_back(r);
  d = derive(records, {0.03});
  CHECK(d.setting.id == "default");
  CHECK(d.env.empty());
  CHECK(d.rules.empty());
}

TEST_CASE("doubts: where the interval holds the threshold, and nowhere it is settled") {
  MeasurementTable t;
  // 1 KiB settled: 20% faster, tight. 2 KiB: 5% faster with 5% noise. 4 KiB: clearly no gain.
  for (auto [bytes, def, cand, spread] :
       {std::tuple{1024ull, 120.0, 100.0, 0.001}, std::tuple{2048ull, 105.0, 100.0, 0.05},
        std::tuple{4096ull, 100.0, 120.0, 0.001}}) {
    t.add(ok(kAr, bytes, {}, around(def, spread), Algorithm::tree, Protocol::simple));
    t.add(ok(kAr, bytes, kRingLL, around(cand, spread), Algorithm::ring, Protocol::ll));
  }
  auto ds = doubts(t, {kAr}, DeriveOptions{});
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].bytes == 2048);
  CHECK(ds[0].candidates == std::vector<Candidate>{Candidate{}, kRingLL});
}

TEST_CASE("exhaustive: repetitions are spent where an answer is in doubt, doubling each round") {
  search::testing::FakeCluster fc;
  fc.noise = 0.1;
  const TempDir tmp("test-statistics");
  const std::filesystem::path dir = tmp.path();
  TuneOptions o;
  o.space.collectives = {Collective::allreduce};
  o.space.min_bytes = 1024;
  o.space.max_bytes = 1 << 20;
  o.space.scales = {{1, 8}};
  o.space.settings = {{"default", {}}};
  o.strategy = "exhaustive";
  o.journal = dir / "j.jsonl";
  o.header.source = "simulated";
  std::vector<runners::MeasureRequest> log;
  auto r = tune(o, [&](const runners::ProcessSetting&, const runners::Scale&) {
    return std::make_unique<search::testing::FakeRunner>(fc, -1, &log);
  });
  std::map<int, int> by_repetitions;
  for (const auto& q : log) ++by_repetitions[q.repetitions];
  const uint64_t grid = (r.plan.space.collectives[0].candidates.size() + 1) * r.plan.space.sizes.size();
  CHECK(by_repetitions[5] == static_cast<int>(grid));  // the grid
  CHECK(by_repetitions.count(10) == 1);                // then rounds of twice as many, doubling
  for (const auto& [reps, n] : by_repetitions)
    CHECK((reps == 5 || reps == 10 || reps == 20 || reps == 40 || reps == 80 || reps == 160));
  // Only a few points are in doubt: far fewer extra measurements than the grid.
  CHECK(log.size() < grid + grid / 4);
  fs::remove_all(dir);
}

namespace {

// `tune --simulate --example h100-8x --nodes 2 --shapes 2x8 --strategy exhaustive --seed 1..5`, in process:
// the whole job's shape, to keep the test short (bench_strategy measures every default shape). One test case
// per noise level, so that ctest runs them side by side.
void check_five_seeds(double noise) {
  std::vector<autotune::testing::SimulatedCalibration> seeds;
  for (uint64_t seed = 1; seed <= 5; ++seed)
    seeds.push_back(
        autotune::testing::simulated_tune({"h100-8x", 2, "exhaustive", seed, noise, {}, {{2, 16}}}));
  auto agreement = autotune::testing::seed_agreement(seeds, 4);
  INFO("noise " << noise << ": " << agreement.agreeing << " of " << agreement.ruled << " points agree");
  CHECK(agreement.ruled > 0);
  CHECK(agreement.share() >= 0.9);
  for (const auto& s : seeds) {
    auto truth = autotune::testing::truth_check(s, 0.03);
    CHECK(truth.real_gains > 0);
    CHECK(truth.found == truth.real_gains);
    CHECK(truth.harmful == 0);
  }
}

}  // namespace

TEST_CASE(
    "simulator: five noise seeds of one truth agree on the points they rule on and find its gains (3%)") {
  check_five_seeds(0.03);
}

TEST_CASE(
    "simulator: five noise seeds of one truth agree on the points they rule on and find its gains (6%)") {
  check_five_seeds(0.06);
}

TEST_CASE("simulator: adaptive puts its range edges within one grid step of exhaustive's") {
  // Under the truth fitted to published figures (issue 25) allreduce's tree/LL lower edge on h100-8x is where
  // a coarse size (8 KiB) looks a win on 5 repetitions and is not on 80: adaptive bisects again after its
  // rounds of repetitions, or it would interpolate that edge across a whole coarse interval (70-77 KiB
  // where exhaustive finds 21 KiB).
  for (const char* example : {"h100-8x", "h100-8x-2nic", "a100-pcie-8x"}) {
    auto ex = autotune::testing::simulated_tune({example, 1, "exhaustive", 1, 0.03, {}, {{1, 8}}});
    auto ad = autotune::testing::simulated_tune({example, 1, "adaptive", 1, 0.03, {}, {{1, 8}}});
    auto one = autotune::testing::edge_agreement(ex, ad);
    INFO(example << ": " << one.within << " of " << one.edges << " edges within one grid step");
    CHECK(one.edges > 0);
    CHECK(one.within == one.edges);
  }
}

namespace {

// Sizes the adaptive strategy measured NCCL's default at, on a made-up allreduce where ring/LL128 is 20%
// faster than NCCL's default at every size and NCCL's default runs ring/LL below `switch_bytes` and
// ring/simple from there on (a switch that never happens when switch_bytes is 0).
std::set<uint64_t> adaptive_default_sizes(uint64_t switch_bytes) {
  StrategyInput in;
  in.collectives = {{kAr, {{Algorithm::ring, Protocol::ll128, 0}}}};
  for (uint64_t b = 1024; b <= (64ull << 20); b *= 2) in.sizes.push_back(b);
  in.repetitions = 5;
  std::set<uint64_t> default_sizes;
  MeasureFn measure = [&](const std::vector<runners::MeasureRequest>& batch) {
    std::vector<Measurement> out;
    for (const auto& r : batch) {
      const double t = 10.0 + static_cast<double>(r.bytes) / 1e4;
      const bool is_default = r.candidate.is_default();
      if (is_default) default_sizes.insert(r.bytes);
      const Protocol ran = !is_default                               ? Protocol::ll128
                           : switch_bytes && r.bytes >= switch_bytes ? Protocol::simple
                                                                     : Protocol::ll;
      Measurement m = ok(kAr, r.bytes, r.candidate, around(is_default ? t * 1.2 : t, 0.01, r.repetitions),
                         Algorithm::ring, ran);
      m.request = r;
      out.push_back(m);
    }
    return std::optional<std::vector<Measurement>>(out);
  };
  make_adaptive_strategy()->run(in, measure);
  return default_sizes;
}

}  // namespace

TEST_CASE(
    "adaptive: where NCCL's default switches protocol under one winner, it measures the sizes between") {
  // The grid is 1K..64M; the coarse sizes every fifth: 1K, 32K, 1M, 32M, 64M.
  const std::set<uint64_t> coarse = {1024, 32ull << 10, 1ull << 20, 32ull << 20, 64ull << 20};
  CHECK(adaptive_default_sizes(0) == coarse);  // one winner, one default choice: nothing between
  // NCCL switches at 128K, between the coarse 32K and 1M: the strategy bisects to the neighbours there
  // (the margins over the default may differ on either side of NCCL's switch) and nowhere else.
  const auto sizes = adaptive_default_sizes(128ull << 10);
  CHECK(sizes.count(64ull << 10) + sizes.count(128ull << 10) + sizes.count(256ull << 10) >= 2);
  for (uint64_t b : sizes) {
    INFO(b);
    CHECK((coarse.count(b) || (b > (32ull << 10) && b < (1ull << 20))));
  }
}

namespace {

// A made-up allreduce at every size given: NCCL's default (tree/simple) at `default_us`, ring/LL and
// ring/simple both `gain` faster (a rule either way, the two alike), each repetition with `spread` of
// deterministic noise that differs per measurement.
MeasureFn two_alike(double default_us, double gain, double spread,
                    std::vector<runners::MeasureRequest>& log) {
  return [default_us, gain, spread, &log](const std::vector<runners::MeasureRequest>& batch) {
    std::vector<Measurement> out;
    for (const auto& r : batch) {
      const bool is_default = r.candidate.is_default();
      const double center = is_default ? default_us : default_us / (1.0 + gain);
      std::vector<double> times;
      for (int i = 0; i < r.repetitions; ++i)
        times.push_back(center * (1.0 + spread * search::testing::fake_unit_noise(log.size() * 1009 + i)));
      Measurement m =
          ok(kAr, r.bytes, r.candidate, std::move(times), is_default ? Algorithm::tree : Algorithm::ring,
             is_default ? Protocol::simple : *r.candidate.protocol);
      m.request = r;
      log.push_back(r);
      out.push_back(m);
    }
    return std::optional<std::vector<Measurement>>(out);
  };
}

int most_repetitions(const std::vector<runners::MeasureRequest>& log) {
  int most = 0;
  for (const auto& r : log) most = std::max(most, r.repetitions);
  return most;
}

}  // namespace

TEST_CASE("doubts: an interval of zero width is settled, however near the threshold or its rival") {
  MeasurementTable t;
  // The same time in every repetition (a noise-free runner): ring/LL 4.2% faster at 1 KiB and 2 KiB (a rule
  // only just past 1.5x the threshold), ring/LL and ring/simple tied at 4 KiB, both 10% faster.
  for (uint64_t bytes : {1024ull, 2048ull}) {
    t.add(ok(kAr, bytes, {}, std::vector<double>(5, 104.2), Algorithm::tree, Protocol::simple));
    t.add(ok(kAr, bytes, kRingLL, std::vector<double>(5, 100.0), Algorithm::ring, Protocol::ll));
  }
  t.add(ok(kAr, 4096, {}, std::vector<double>(5, 110.0), Algorithm::tree, Protocol::simple));
  t.add(ok(kAr, 4096, kRingLL, std::vector<double>(5, 100.0), Algorithm::ring, Protocol::ll));
  t.add(ok(kAr, 4096, kRingSimple, std::vector<double>(5, 100.0), Algorithm::ring, Protocol::simple));
  CHECK(doubts(t, {kAr}, DeriveOptions{}).empty());
}

TEST_CASE("simulator: without noise both strategies stop at the first repetitions") {
  for (const char* strategy : {"adaptive", "exhaustive"}) {
    auto run = autotune::testing::simulated_tune({"h100-8x", 1, strategy, 1, 0.0, {}, {{1, 8}}});
    INFO(strategy << ": " << run.result.measured << " measurements, " << run.samples << " repetitions");
    CHECK(run.most_repetitions == 5);
    CHECK_FALSE(run.result.profile.rules.empty());
  }
}

TEST_CASE("rounds: a doubt that even the last round could not settle is given up and said") {
  StrategyInput in;
  in.collectives = {{kAr, {kRingLL, kRingSimple}}};
  in.sizes = {1024};
  std::vector<runners::MeasureRequest> log;
  const StrategyReport r = make_exhaustive_strategy()->run(in, two_alike(100.0, 0.10, 0.03, log));
  // Ring/LL and ring/simple both 10% faster with 3% noise: a rule either way, and which of the two no
  // number of repetitions can tell. Rounds of 10 and 20; the third sees that 315 would not tell them apart.
  CHECK(most_repetitions(log) == 20);
  REQUIRE(r.given_up.size() == 1);
  CHECK_THAT(r.given_up[0], Catch::Contains("allreduce at 1 KiB") && Catch::Contains("given up"));
  CHECK(r.measurements == log.size());

  // Rounds that end before a doubt can be judged say what is still in doubt after the last.
  in.repetition_rounds = 2;
  log.clear();
  const StrategyReport capped = make_exhaustive_strategy()->run(in, two_alike(100.0, 0.10, 0.03, log));
  CHECK(most_repetitions(log) == 20);
  REQUIRE(capped.given_up.size() == 1);
  CHECK_THAT(capped.given_up[0], Catch::Contains("still in doubt after the last round"));
}

TEST_CASE("rounds: a gain against the threshold is measured to the cap, lest a rule turn on too few") {
  StrategyInput in;
  in.collectives = {{kAr, {kRingLL}}};
  in.sizes = {1024};
  std::vector<runners::MeasureRequest> log;
  // Ring/LL 3% faster, on the threshold: whether a rule holds turns on it, so it is not given up at the
  // third round, where a doubt between two alike is.
  const StrategyReport r = make_exhaustive_strategy()->run(in, two_alike(100.0, 0.03, 0.03, log));
  CHECK(most_repetitions(log) >= 40);
  for (const auto& line : r.given_up) CHECK_THAT(line, !Catch::Contains("given up"));
}

TEST_CASE("rounds: a question is given up only when its interval narrowed to the cap still holds it") {
  DoubtQuestion q{{0.03, 0.01, 0.05, 0.98}, 0.03, 20};
  CHECK_FALSE(could_settle(q, 320));  // +3% on the threshold: no cap separates them
  q.interval = {0.06, 0.02, 0.10, 0.98};
  CHECK(could_settle(q, 320));       // narrowed to a quarter: +5%..+7%, past +3%
  CHECK_FALSE(could_settle(q, 25));  // narrowed by a tenth only: +2.4%..+9.6%
  q.samples = 0;                     // a side not measured yet: measuring it is what settles it
  CHECK(could_settle(q, 40));
}

TEST_CASE("adaptive: a candidate already slower at a smaller size than near the default is not measured") {
  // Ring/simple is 3x NCCL's default at every size; times grow as 10 us + bytes / 10 GB/s.
  StrategyInput in;
  in.collectives = {{kAr, {kRingSimple}}};
  for (uint64_t b = 1024; b <= (64ull << 20); b *= 2) in.sizes.push_back(b);
  std::vector<runners::MeasureRequest> log;
  MeasureFn measure = [&](const std::vector<runners::MeasureRequest>& batch) {
    std::vector<Measurement> out;
    for (const auto& r : batch) {
      const double t = (10.0 + static_cast<double>(r.bytes) / 1e4) * (r.candidate.is_default() ? 1.0 : 3.0);
      const bool is_default = r.candidate.is_default();
      Measurement m =
          ok(kAr, r.bytes, r.candidate, std::vector<double>(r.repetitions, t),
             is_default ? Algorithm::tree : Algorithm::ring, is_default ? Protocol::ll : Protocol::simple);
      m.request = r;
      log.push_back(r);
      out.push_back(m);
    }
    return std::optional<std::vector<Measurement>>(out);
  };
  make_adaptive_strategy()->run(in, measure);
  std::set<uint64_t> simple_at;
  for (const auto& r : log)
    if (!r.candidate.is_default()) simple_at.insert(r.bytes);
  // Coarse sizes 1K, 32K, 1M, 32M, 64M: at 32K NCCL's default takes 13.3 us, and ring/simple took 30.3 us
  // at 1K already.
  CHECK(simple_at.count(1024) == 1);
  CHECK(simple_at.count(32ull << 10) == 0);
  CHECK(simple_at.count(1ull << 20) == 1);
}
