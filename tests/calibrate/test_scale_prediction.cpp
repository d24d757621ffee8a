// Predicted scales against measured ones on the simulator: a calibration that predicts 256x8 from the smaller
// scales (confirming around the predicted crossovers) picks, at every size of that scale, a choice whose
// measured time (from an exhaustive calibration of the same simulated cluster) is within the noise of the
// exhaustive calibration's own choice; a slow spine that only the full scale crosses is caught by the
// confirmations, and that scale is measured in full; and which scales are predicted.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "calibrate/scale_prediction.hpp"
#include "cli_test_support.hpp"
#include "common/input_error.hpp"
#include "profiles/profile_toml.hpp"
#include "search/journal.hpp"
#include "search/rule_basis.hpp"
#include "search/strategy_samples.hpp"
#include "simulator/sim_fault.hpp"

using namespace autotune;

namespace {

std::filesystem::path calibrate_into(const std::string& dir, const std::string& predict,
                                     const std::string& extra = "") {
  std::filesystem::remove_all(dir);
  const std::string cmd =
      test::kBinary +
      " tune --simulate --example h100-8x --nodes 256 --shapes 16x8,32x8,64x8,128x8,256x8 "
      "--max-bytes 64M --strategy exhaustive --collectives allreduce,broadcast "
      "--ignore-health --cross-nic 0 --ib-hca mlx5_0 --predict " +
      predict + " " + extra + " --store " + dir + " >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return dir;
}

runners::Candidate choice_at(const profiles::Profile& p, const runners::Scale& scale, nccl::Collective c,
                             uint64_t bytes) {
  for (const auto& r : p.rules)
    if (r.collective == c && r.applies_to(profiles::CommShape::of(scale.nodes, scale.ranks)) &&
        r.min_bytes <= bytes && bytes <= r.max_bytes)
      return {r.algorithm, r.protocol, r.channels};
  return {};
}

}  // namespace

// Each scale that was predicted (a confirmation that misses measures its scale in full: on this simulator
// 128x8 or 256x8 may fall back, as the simulated fabric's latency does not grow evenly with the nodes).
TEST_CASE("predicted scales: choices at 128x8 and 256x8 match an exhaustive calibration's within the noise") {
  const std::string base = (std::filesystem::temp_directory_path() / "autotune-predict-test").string();
  const auto predicted_dir = calibrate_into(base + "-auto", "auto");
  const auto measured_dir = calibrate_into(base + "-off", "off");
  const auto predicted = profiles::read_profile(test::only_file(predicted_dir, ".toml"));
  const auto measured = profiles::read_profile(test::only_file(measured_dir, ".toml"));
  const auto pj = search::load_journal(test::only_file(predicted_dir, ".jsonl"));
  const auto mj = search::load_journal(test::only_file(measured_dir, ".jsonl"));
  CHECK(predicted.env == measured.env);
  int scales_predicted = 0;
  for (const runners::Scale big : {runners::Scale{128, 1024}, runners::Scale{256, 2048}}) {
    size_t predicted_records = 0, measured_at_big = 0;
    for (const auto& r : pj.records)
      if (r.scale == big && r.setting.is_default())
        (r.source == search::kPredictedSource ? predicted_records : measured_at_big)++;
    if (predicted_records == 0) continue;  // fell back: measured in full, as --predict off does
    ++scales_predicted;
    CHECK(measured_at_big < predicted_records);  // the confirmations are a small part
    search::MeasurementTable truth;
    for (const auto& r : mj.records)
      if (r.scale == big && r.setting.is_default()) truth.add(r.measurement);
    int sizes = 0;
    double worst = 0.0;
    for (auto c : {nccl::Collective::allreduce, nccl::Collective::broadcast})
      for (uint64_t bytes : truth.sizes(c)) {
        const auto* tp = truth.find(c, bytes, choice_at(predicted, big, c, bytes));
        const auto* tm = truth.find(c, bytes, choice_at(measured, big, c, bytes));
        REQUIRE(tp);
        REQUIRE(tm);
        const double ratio = tp->median() / tm->median() - 1.0;
        worst = std::max(worst, ratio);
        ++sizes;
        CHECK(ratio <= 0.06);  // twice the threshold: the noise of two 3%-noise medians
      }
    WARN(runners::shape_text(big) << " predicted: " << predicted_records << " predicted times, "
                                  << measured_at_big << " confirmations; " << sizes
                                  << " sizes compared, worst " << worst * 100
                                  << "% slower than the exhaustive choice");
    CHECK(sizes > 20);
  }
  CHECK(scales_predicted >= 1);
  std::filesystem::remove_all(predicted_dir);
  std::filesystem::remove_all(measured_dir);
}

TEST_CASE("predicted scales: chosen above 64 nodes after two smaller multi-node scales, off turns it off") {
  const std::vector<runners::Scale> scales = {{1, 8}, {64, 512}, {128, 1024}, {32, 256}, {256, 2048}};
  // 128x8 comes after only one smaller multi-node scale of 8 per node: measured; 256x8 after 64 and 32.
  CHECK(calibrate::predicted_scales(scales, {}) == std::set<runners::Scale>{{256, 2048}});
  CHECK(calibrate::predicted_scales(scales, calibrate::parse_predict_mode("off")).empty());
  CHECK_THROWS_AS(calibrate::parse_predict_mode("on"), InputError);
}

TEST_CASE("predicted scales: a slow spine only 256x8 crosses is caught, and 256x8 is measured in full") {
  const auto spine = sim::parse_sim_fault("spine=0.5,beyond=128");
  REQUIRE(spine.kind == sim::SimFault::Kind::spine);
  const std::string dir = (std::filesystem::temp_directory_path() / "autotune-predict-test-spine").string();
  calibrate_into(dir, "auto", "--sim-fault spine=0.5,beyond=128");
  const auto journal = search::load_journal(test::only_file(dir, ".jsonl"));
  const auto profile = profiles::read_profile(test::only_file(dir, ".toml"));
  const runners::Scale big{256, 2048};
  size_t predicted = 0, measured = 0;
  for (const auto& r : journal.records)
    if (r.scale == big) (r.source == search::kPredictedSource ? predicted : measured)++;
  CHECK(predicted == 0);
  CHECK(measured > 500);  // the whole grid, not just the confirmations
  for (const auto& r : profile.rules)
    if (r.applies_to(profiles::CommShape::of(256, 2048))) CHECK_FALSE(r.basis.has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("predicted scales: a rule is confirmed where one of its sizes was measured, else predicted") {
  const runners::ProcessSetting setting{"default", {}};
  const runners::Scale big{256, 2048}, small{64, 512};
  auto record = [&](runners::Scale scale, uint64_t bytes, const char* source) {
    search::JournalRecord r{setting, scale, 0, {}, source, "", ""};
    r.measurement.request = {nccl::Collective::allreduce, bytes, {}, 5};
    r.measurement.times_us = {10, 11, 12};
    return r;
  };
  const std::vector<search::JournalRecord> records = {
      record(big, 2048, search::kPredictedSource), record(big, 1024, "simulated"),
      record(big, 1 << 20, search::kPredictedSource), record(small, 1 << 20, "simulated")};
  auto rule = [](runners::Scale scale, uint64_t lo, uint64_t hi) {
    search::DerivedRule d;
    d.scale = scale;
    d.rule.collective = nccl::Collective::allreduce;
    d.rule.min_bytes = lo;
    d.rule.max_bytes = hi;
    return d;
  };
  std::vector<search::DerivedRule> rules = {rule(big, 1024, 4096), rule(big, 1 << 20, 2 << 20),
                                            rule(small, 1 << 20, 2 << 20)};
  search::mark_rule_basis(rules, records, setting);
  CHECK(rules[0].rule.basis == profiles::RuleBasis::confirmed);
  CHECK(rules[1].rule.basis == profiles::RuleBasis::predicted);
  CHECK_FALSE(rules[2].rule.basis.has_value());  // a scale measured in full
  // The profile keeps it, and a profile without it reads as before.
  profiles::Profile p;
  p.cluster.name = "c";
  p.provenance.created = "2026-12-01T12:00:00Z";
  p.provenance.nccl_version = "2.28.9";
  p.rules = {rules[0].rule, rules[2].rule};
  const auto back = profiles::parse_profile(profiles::format_profile(p), "mem");
  CHECK(back.rules.at(0).basis == profiles::RuleBasis::confirmed);
  CHECK_FALSE(back.rules.at(1).basis.has_value());
  std::string text = profiles::format_profile(p);
  text.replace(text.find("\"confirmed\""), 11, "\"guessed\"");
  CHECK_THROWS_WITH(profiles::parse_profile(text, "mem"),
                    Catch::Contains("expected \"confirmed\" or \"predicted\" (absent: measured)"));
}
