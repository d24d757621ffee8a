// tune's health check: in process on the simulator, and as a job of its own through the launcher for an
// orchestrator on GPUs (check --format json --output FILE, started the way the calibration's jobs are).
#include <catch2/catch.hpp>

#include <fstream>

#include "calibrate/tune_check.hpp"
#include "check/check_json.hpp"
#include "support/fake_process_launcher.hpp"
#include "support/manual_clock.hpp"
#include "topology/examples.hpp"

using namespace autotune;

TEST_CASE("health: tune's check on the simulator names the sick nodes", "[check][health]") {
  calibrate::HealthCheckRequest q;
  q.runner.simulate = true;
  q.runner.topology = topology::load_example("h100-8x");
  q.runner.nodes = 8;
  q.runner.faults = {sim::parse_sim_fault("node=3,nic=1,rate=0.5"),
                     sim::parse_sim_fault("node=5,gpu=2,clock=0.6")};
  const auto h = calibrate::check_before_tune(q);
  CHECK(h.checked_by == "check (simulated)");
  REQUIRE(h.nodes.size() == 8);
  std::vector<int> blocking;
  for (const auto& n : h.nodes)
    if (!topology::may_calibrate(n)) blocking.push_back(n.node);
  CHECK(blocking == std::vector<int>{3, 5});
}

TEST_CASE("health: an orchestrator on GPUs runs check as a job through its launcher and reads its JSON",
          "[check][health]") {
  const auto dir = std::filesystem::temp_directory_path() / ("check_job_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  calibrate::HealthCheckRequest q;
  q.mode = calibrate::CalibrationMode::orchestrator;
  q.launcher = {{"srun", "-N", "2"}, "--launcher"};
  q.exe = "/opt/bin/nccl-autotune";
  q.work_dir = dir;
  test::ManualClock clock;
  // The job writes the report of a cluster whose node 1 blocks, and exits 1 as check does then.
  test::ScriptedChild child;
  child.ends_with = ExitStatus{1, {}};
  child.at_start = [](const ProcessSpec& spec) {
    const auto& argv = spec.argv;
    const auto out = std::find(argv.begin(), argv.end(), "--output");
    REQUIRE(out != argv.end());
    std::ofstream(*(out + 1))
        << R"({"schema": 1, "source": "measured", "fabric_env": {"NCCL_IB_GID_INDEX": "3"},
      "nodes": [{"node": 0, "host": "a", "status": "ok", "findings": []},
                {"node": 1, "host": "b", "status": "block", "findings": [{"kind": "nic_bandwidth_low",
                 "severity": "block", "device": "mlx5_1", "reading": "r", "source": "check: measured",
                 "message": "m"}]}]})";
  };
  test::FakeProcessLauncher launcher(clock, {child});
  const auto h = calibrate::check_before_tune(q, &launcher);
  REQUIRE(launcher.started().size() == 1);
  const auto& argv = launcher.started()[0].spec.argv;
  CHECK(std::vector<std::string>(argv.begin(), argv.begin() + 6) ==
        std::vector<std::string>{"srun", "-N", "2", "/opt/bin/nccl-autotune", "check", "--format"});
  // The check job gets the calibration's hang bound.
  q.runner.watchdog_scale = 2.5;
  test::FakeProcessLauncher scaled(clock, {child});
  calibrate::check_before_tune(q, &scaled);
  const auto& scaled_argv = scaled.started().at(0).spec.argv;
  const auto flag = std::find(scaled_argv.begin(), scaled_argv.end(), "--watchdog-scale");
  REQUIRE(flag != scaled_argv.end());
  CHECK(std::stod(*(flag + 1)) == 2.5);
  REQUIRE(h.nodes.size() == 2);
  CHECK(h.nodes[1].host == "b");
  CHECK_FALSE(topology::may_calibrate(h.nodes[1]));
  CHECK(h.fabric_env.at("NCCL_IB_GID_INDEX") == "3");
  // A job that leaves no result is an error with its output.
  test::ScriptedChild silent;
  silent.ends_with = ExitStatus{127, {}};
  silent.output = "srun: command not found\n";
  test::FakeProcessLauncher broken(clock, {silent});
  CHECK_THROWS_WITH(
      calibrate::check_before_tune(q, &broken),
      Catch::Contains("left no result: exit status 127") && Catch::Contains("srun: command not found"));
  std::filesystem::remove_all(dir);
}
