// check --slurm-health's decisions (check/slurm_health.hpp) with scontrol behind the launcher seam: a
// blocking finding drains the node naming it; a healthy node this check drained is resumed; a node an
// administrator drained for anything else is never resumed nor relabelled; a warning drains nothing; what
// `scontrol show node` prints is read as Slurm 22.05 prints it; a failing or hanging scontrol is an error.
#include <catch2/catch.hpp>

#include "check/slurm_health.hpp"
#include "support/fake_process_launcher.hpp"
#include "support/manual_clock.hpp"
#include "support/temp_dir.hpp"

using namespace autotune;
using namespace autotune::check;
using topology::HealthFinding;
using topology::Severity;

namespace {

const HealthFinding kHalfRate{"nic_rate_degraded",    Severity::block, "mlx5_1 port 1",
                              "rate 200 Gb/s of 400", "sysfs",         "mlx5_1 port 1 runs at half its rate"};
const HealthFinding kWarm{"clock_throttled",  Severity::warn, "GPU2",
                          "thermal slowdown", "nvml",         "GPU2 is throttled"};

// `scontrol show node n2` as Slurm 22.05 prints it (abridged), with this state and reason.
std::string show_node(const std::string& state, const std::string& reason) {
  return "NodeName=n2 Arch=x86_64 CoresPerSocket=1\n"
         "   CPUAlloc=0 CPUTot=2 CPULoad=0.10\n"
         "   NodeAddr=127.0.0.1 NodeHostName=n2 Version=22.05.8\n"
         "   State=" +
         state +
         " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
         "   Partitions=debug\n" +
         (reason.empty() ? "" : "   Reason=" + reason + " [root@2026-12-02T10:00:00]\n");
}

// scontrol as the fake launcher plays it: ends after `seconds` with `code`, having printed `output`.
test::ScriptedChild scontrol(double seconds, int code, std::string output, bool ignores_sigterm = false) {
  test::ScriptedChild c;
  c.runs_for_s = seconds;
  c.ends_with = ExitStatus{code, {}};
  c.ignores_sigterm = ignores_sigterm;
  c.output = std::move(output);
  return c;
}

struct Run {
  test::ManualClock clock;
  test::TempDir dir{"slurm-health"};
  std::vector<std::vector<std::string>> commands;

  SlurmHealthResult check(const std::vector<HealthFinding>& findings, const std::string& state,
                          const std::string& reason) {
    test::FakeProcessLauncher launcher(clock,
                                       {scontrol(0.05, 0, show_node(state, reason)), scontrol(0.05, 0, "")});
    auto r = apply_slurm_health("n2", findings, launcher, clock, dir / "scontrol.out");
    for (const auto& s : launcher.started()) commands.push_back(s.spec.argv);
    return r;
  }
};

const std::vector<std::string> kShow = {"scontrol", "show", "node", "n2"};

}  // namespace

TEST_CASE("a blocking finding drains the node with a reason naming it", "[slurm]") {
  Run run;
  const auto r = run.check({kWarm, kHalfRate}, "IDLE", "");
  CHECK(r.decision.action == SlurmAction::drain);
  REQUIRE(run.commands.size() == 2);
  CHECK(run.commands[0] == kShow);
  CHECK(run.commands[1] ==
        std::vector<std::string>{"scontrol", "update", "NodeName=n2", "State=DRAIN",
                                 "Reason=nccl-autotune: mlx5_1 port 1: rate 200 Gb/s of 400"});
  CHECK(drained_by_check(r));
}

TEST_CASE("several blocking findings: the first is named, the others counted", "[slurm]") {
  HealthFinding ecc{
      "ecc_uncorrected", Severity::block, "GPU3", "volatile uncorrected ECC errors: 3", "nvml", ""};
  CHECK(drain_reason({kHalfRate, kWarm, ecc}) ==
        "nccl-autotune: mlx5_1 port 1: rate 200 Gb/s of 400 (+1 more)");
  CHECK(drain_reason({kWarm}).empty());
}

TEST_CASE("a healthy node this check drained is resumed", "[slurm]") {
  Run run;
  const auto r = run.check({kWarm}, "IDLE+DRAIN", "nccl-autotune: mlx5_1 port 1: rate 200 Gb/s of 400");
  CHECK(r.decision.action == SlurmAction::resume);
  REQUIRE(run.commands.size() == 2);
  CHECK(run.commands[1] == std::vector<std::string>{"scontrol", "update", "NodeName=n2", "State=RESUME"});
  CHECK_FALSE(drained_by_check(r));
}

TEST_CASE("a node drained by an administrator is never resumed nor relabelled", "[slurm]") {
  Run run;
  const auto healthy = run.check({}, "IDLE+DRAIN", "replacing DIMM 4");
  CHECK(healthy.decision.action == SlurmAction::none);
  const auto sick = run.check({kHalfRate}, "MIXED+DRAIN", "replacing DIMM 4");
  CHECK(sick.decision.action == SlurmAction::none);
  CHECK(run.commands == std::vector<std::vector<std::string>>{kShow, kShow});
  CHECK_FALSE(drained_by_check(sick));
}

TEST_CASE("a node drained for the same finding is left as it is, a new finding relabels it", "[slurm]") {
  Run run;
  const auto same = run.check({kHalfRate}, "DRAINED", "nccl-autotune: mlx5_1 port 1: rate 200 Gb/s of 400");
  CHECK(same.decision.action == SlurmAction::none);
  CHECK(drained_by_check(same));
  HealthFinding ecc{
      "ecc_uncorrected", Severity::block, "GPU3", "volatile uncorrected ECC errors: 3", "nvml", ""};
  const auto other = run.check({ecc}, "DRAINED", "nccl-autotune: mlx5_1 port 1: rate 200 Gb/s of 400");
  CHECK(other.decision.action == SlurmAction::drain);
  CHECK(other.decision.reason == "nccl-autotune: GPU3: volatile uncorrected ECC errors: 3");
}

TEST_CASE("a warning alone drains nothing, and a healthy node in service is left alone", "[slurm]") {
  Run run;
  CHECK(run.check({kWarm}, "ALLOCATED", "").decision.action == SlurmAction::none);
  CHECK(run.commands == std::vector<std::vector<std::string>>{kShow});
}

TEST_CASE("scontrol's node text: state, reason without its stamp, no reason", "[slurm]") {
  const auto n = parse_scontrol_node(show_node("IDLE+DRAIN", "nccl-autotune: GPU3: x [y]"));
  CHECK(n.state == "IDLE+DRAIN");
  CHECK(n.reason == "nccl-autotune: GPU3: x [y]");
  CHECK(n.drained());
  CHECK(parse_scontrol_node(show_node("IDLE", "")).reason.empty());
  CHECK_FALSE(parse_scontrol_node(show_node("IDLE", "")).drained());
  CHECK_THROWS_WITH(parse_scontrol_node("Node n9 not found\n"), Catch::Contains("expected a State= field"));
}

TEST_CASE("scontrol failing or hanging is an error naming it", "[slurm]") {
  test::ManualClock clock;
  test::TempDir dir{"slurm-health"};
  test::FakeProcessLauncher failing(
      clock, {scontrol(0.05, 1, "slurm_load_node error: Unable to contact slurm controller")});
  CHECK_THROWS_WITH(apply_slurm_health("n2", {}, failing, clock, dir / "out"),
                    Catch::Contains("scontrol show node n2: exit status 1: slurm_load_node error"));
  test::FakeProcessLauncher hanging(clock, {scontrol(1e9, 0, "", true)});
  CHECK_THROWS_WITH(apply_slurm_health("n2", {}, hanging, clock, dir / "out"),
                    Catch::Contains("no answer in 30 s"));
}
