// Stragglers a calibration saw (search/group_spread.hpp, calibrate/spread_findings.hpp): each group of a
// shape measured several at once against the shape's median group over its measurements, against hand-made
// records; and end to end, a simulated layout calibration with a slow GPU on one node, which `tune` names in
// its summary and `check
// --journal` per node, and which the same run without the fault does not.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "calibrate/journal_check.hpp"
#include "calibrate/spread_findings.hpp"
#include "check/check_json.hpp"
#include "cli_test_support.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "search/group_spread.hpp"
#include "search/journal.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using autotune::test::TempDir;

namespace {

// One ok all-reduce of `bytes` at `shape` whose groups took `times` (us).
search::JournalRecord spread_record(runners::Scale shape, uint64_t bytes, std::vector<double> times) {
  search::JournalRecord r;
  r.setting = {"default", {}};
  r.scale = shape;
  r.measurement.request.bytes = bytes;
  r.measurement.times_us = {*std::max_element(times.begin(), times.end())};
  r.measurement.group_times_us = std::move(times);
  r.source = "simulated";
  return r;
}

// Ten measurements of 1x8 over 4 nodes x 8 GPUs (groups = nodes): group 2 25% slow (its bandwidth 0.75 of
// the median group's) in eight of them, group 1 slow in one.
std::vector<search::JournalRecord> straggler_records() {
  std::vector<search::JournalRecord> out;
  for (int i = 0; i < 10; ++i) {
    std::vector<double> t = {100.0, 100.0, 100.0, 100.0};
    if (i < 8) t[2] = 100.0 / 0.75;
    if (i == 9) t[1] = 200.0;
    out.push_back(spread_record({1, 8}, 4 << 20, t));
  }
  return out;
}

std::vector<std::string> kinds_on(const std::vector<topology::HealthFinding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings)
    out.push_back(f.kind + " " + f.device + " " + std::string(topology::severity_name(f.severity)));
  return out;
}

// A simulated calibration's journal of 4 nodes x 8 GPUs: its header (with `hosts`), then `records`.
void write_spread_journal(const fs::path& file, std::vector<std::string> hosts,
                          const std::vector<search::JournalRecord>& records) {
  search::JournalWriter w(file);
  search::JournalHeader h;
  h.source = "simulated";
  h.nodes = 4;
  h.gpus_per_node = 8;
  h.hosts = std::move(hosts);
  w.write(h);
  if (!records.empty()) w.write(records);
}

int spread_cli(const std::string& args, const fs::path& out) {
  const int status = std::system((test::kBinary + " " + args + " >" + out.string() + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("group spread: a group 25% slow in most measurements blocks on its node, one slow once does not") {
  const auto records = straggler_records();
  const auto spreads = search::group_spreads(records, {4, 8});
  REQUIRE(spreads.size() == 4);
  CHECK(spreads[2].nodes == std::vector<int>{2});
  CHECK(spreads[2].gpus.empty());  // the whole node
  CHECK(spreads[2].measurements == 10);
  CHECK(spreads[2].ratio == Approx(0.75).epsilon(0.01));
  CHECK(spreads[1].ratio > 0.95);
  CHECK(spreads[2].describe() == "1x8 group 2 (node 2): 0.75 of the median group over 10 measurements");
  const auto found =
      calibrate::group_findings(spreads, 4, check::Thresholds{}, "calibration journal: simulated");
  REQUIRE(found.size() == 4);
  CHECK(found[0].empty());
  CHECK(found[1].empty());
  CHECK(found[3].empty());
  CHECK(kinds_on(found[2]) == std::vector<std::string>{"calibration_group_slow 1x8 group 2 block"});
  CHECK(found[2][0].reading == spreads[2].describe());
}

TEST_CASE("group spread: warn between the thresholds, nothing from one group, small sizes or failed runs") {
  std::vector<search::JournalRecord> records;
  for (int i = 0; i < 5; ++i)
    records.push_back(spread_record({2, 4}, 8 << 20, {100.0, 100.0, 100.0 / 0.85, 100.0}));
  // 4 nodes x 4 GPUs, 2x2 (2 nodes, 4 ranks): groups 0 and 1 on nodes 0-1 (GPUs 0-1, 2-3), groups 2 and 3 on
  // nodes 2-3.
  const auto spreads = search::group_spreads(records, {4, 4});
  REQUIRE(spreads.size() == 4);
  CHECK(spreads[2].describe() ==
        "2x2 group 2 (nodes 2-3, GPUs 0,1): 0.85 of the median group over 5 measurements");
  const auto found = calibrate::group_findings(spreads, 4, {}, "t");
  CHECK(found[0].empty());
  CHECK(found[1].empty());
  CHECK(kinds_on(found[2]) == std::vector<std::string>{"calibration_group_slow 2x2 group 2 warn"});
  CHECK(kinds_on(found[3]) == kinds_on(found[2]));
  // A geometry the records' group count does not fit (3 nodes: two groups) gives nothing.
  CHECK(search::group_spreads(records, {3, 4}).empty());
  // One communicator (no per-group times), latency-bound sizes, a failed measurement: nothing to judge.
  std::vector<search::JournalRecord> none = {spread_record({4, 32}, 8 << 20, {100.0}),
                                             spread_record({1, 8}, 64 << 10, {100.0, 100.0, 200.0, 100.0})};
  none.push_back(spread_record({1, 8}, 8 << 20, {100.0, 100.0, 200.0, 100.0}));
  none.back().measurement.outcome = runners::Outcome::timed_out;
  CHECK(search::group_spreads(none, {4, 8}).empty());
  // A scale measured side by side on part of the allocation: its groups' nodes are that part's.
  auto placed = straggler_records();
  for (auto& r : placed) r.nodes_used = "4-7";
  CHECK(search::group_spreads(placed, {8, 8})[2].nodes == std::vector<int>{6});
}

TEST_CASE(
    "group spread: a slow group across nodes blocks only where a slow group of another shape shares the "
    "node") {
  // 4 nodes x 4 GPUs. 4x1 (one GPU on every node): group 3, the GPUs 3, at 0.70. 1x4 (one node each): group
  // 2 at 0.85. Alone, the data-parallel group cannot say whose GPU 3 is slow: it warns on every node.
  std::vector<search::JournalRecord> records;
  for (int i = 0; i < 5; ++i)
    records.push_back(spread_record({4, 4}, 8 << 20, {100.0, 100.0, 100.0, 100.0 / 0.7}));
  const auto alone = calibrate::group_findings(search::group_spreads(records, {4, 4}), 4, {}, "t");
  for (int n = 0; n < 4; ++n)
    CHECK(kinds_on(alone[static_cast<size_t>(n)]) ==
          std::vector<std::string>{"calibration_group_slow 4x1 group 3 warn"});
  // With node 2's own group slow too, the straggler is GPU 3 of node 2: a block there, warnings elsewhere.
  for (int i = 0; i < 5; ++i)
    records.push_back(spread_record({1, 4}, 8 << 20, {100.0, 100.0, 100.0 / 0.85, 100.0}));
  const auto both = calibrate::group_findings(search::group_spreads(records, {4, 4}), 4, {}, "t");
  CHECK(kinds_on(both[2]) == std::vector<std::string>{"calibration_group_slow 4x1 group 3 block",
                                                      "calibration_group_slow 1x4 group 2 warn"});
  CHECK_THAT(both[2][0].message,
             Catch::Contains("node 2 is also in the slow 1x4 group 2: the straggler is on node 2, GPU 3"));
  for (int n : {0, 1, 3})
    CHECK(kinds_on(both[static_cast<size_t>(n)]) ==
          std::vector<std::string>{"calibration_group_slow 4x1 group 3 warn"});
}

TEST_CASE("group spread: check --journal names each node's host where the calibration's gate named them") {
  const TempDir tmp("spread-hosts");
  const fs::path file = tmp.path() / "j.jsonl";
  write_spread_journal(file, {"gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04"}, straggler_records());
  const auto report = calibrate::check_journal(file);
  REQUIRE(report.nodes.size() == 4);
  CHECK(report.nodes[2].health.host == "gpu-a03");
  CHECK(report.nodes[2].health.findings.at(0).kind == "calibration_group_slow");
  CHECK(report.blocks());
}

TEST_CASE("group spread: check --journal refuses a bad journal naming the file and line, before any work") {
  const TempDir tmp("spread-bad");
  CHECK_THROWS_AS(calibrate::check_journal(tmp.path() / "missing.jsonl"), InputError);
  const fs::path bad = tmp.path() / "bad.jsonl";
  write_spread_journal(bad, {}, {});
  std::FILE* f = std::fopen(bad.c_str(), "a");
  std::fputs("{\"type\":\"measurement\"}\n", f);
  std::fclose(f);
  CHECK_THROWS_WITH(calibrate::check_journal(bad), Catch::Contains(bad.string() + ":2"));
  const fs::path out = tmp.path() / "out";
  CHECK(spread_cli("check --journal " + bad.string(), out) == 2);
  CHECK_THAT(read_file(out), Catch::Contains(bad.string() + ":2: expected field \"job\""));
}

TEST_CASE("group spread: a slow GPU under a simulated layout calibration is named by tune and check") {
  const TempDir tmp("spread-e2e");
  const std::string tune =
      "tune --simulate --example h100-8x --nodes 4 --parallelism tp=8 --collectives allreduce --min-bytes 1M "
      "--max-bytes 4M --ignore-health --launcher env --store ";
  const fs::path sick = tmp.path() / "sick", healthy = tmp.path() / "healthy";
  fs::create_directories(sick);
  fs::create_directories(healthy);
  REQUIRE(spread_cli(tune + sick.string() + " --sim-fault node=2,gpu=3,clock=0.6", sick / "out") == 0);
  REQUIRE(spread_cli(tune + healthy.string(), healthy / "out") == 0);
  const std::string sick_out = read_file(sick / "out");
  INFO(sick_out);
  CHECK_THAT(sick_out, Catch::Contains("slow groups") && Catch::Contains("  1x8 group 2 (node 2): 0.8"));
  CHECK_THAT(read_file(healthy / "out"), !Catch::Contains("slow groups"));

  // check --journal reports them per node, in its JSON as check's own findings.
  const fs::path json = sick / "check.json";
  CHECK(spread_cli("check --journal " + test::only_file(sick, ".jsonl").string() +
                       " --format json --output " + json.string(),
                   sick / "check.out") == 1);
  const auto report = nlohmann::json::parse(read_file(json));
  CHECK(report["status"] == "block");
  std::vector<std::string> devices;
  for (const auto& f : report["nodes"][2]["findings"])
    if (f["kind"] == "calibration_group_slow") devices.push_back(f["device"]);
  CHECK(std::find(devices.begin(), devices.end(), "1x8 group 2") != devices.end());
  // Only node 2 blocks: the data-parallel group of GPU 3 spans every node, and only node 2 is in another
  // slow group.
  CHECK(report["nodes"][2]["status"] == "block");
  for (int n : {0, 1, 3}) {
    CHECK(report["nodes"][n]["status"] == "warn");
    for (const auto& f : report["nodes"][n]["findings"]) CHECK(f["device"] != "1x8 group 2");
  }
  // The health gate reads it as it reads check's own JSON.
  const auto health = check::read_check_json(read_file(json), json.string());
  CHECK_FALSE(topology::may_calibrate(health.nodes.at(2)));

  const fs::path clean = healthy / "check.out";
  CHECK(spread_cli("check --journal " + test::only_file(healthy, ".jsonl").string(), clean) == 0);
  CHECK_THAT(read_file(clean), !Catch::Contains("findings:") && Catch::Contains("status: ok"));
}
