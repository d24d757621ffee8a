// `probe --dcgm`: dcgmi diag through the CommandRunner seam, its JSON (DCGM 3 and DCGM 4 shapes) read into
// results and findings; an absent dcgmi or unreadable output said in one line.

#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "topology/dcgm_diag.hpp"
#include "topology/health.hpp"

using namespace autotune::topology;

namespace {

class FakeRunner : public CommandRunner {
 public:
  CommandOutput run(const std::vector<std::string>& argv) const override {
    asked = argv;
    return answer;
  }
  CommandOutput answer;
  mutable std::vector<std::string> asked;
};

// DCGM 4's shape (testing/python3/dcgm_diag_schema.json in NVIDIA/DCGM), with a note printed before it.
const char* kDcgm4 = R"(Note: this is a note
{"DCGM Diagnostic": {"test_categories": [
  {"category": "Deployment", "tests": [
    {"name": "Persistence Mode", "results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0,
      "status": "Pass"}], "test_summary": {"status": "Pass"}}]},
  {"category": "Hardware", "tests": [
    {"name": "Memory", "results": [
      {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Pass"},
      {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 3, "status": "Fail",
       "warnings": [{"error_category": 10, "error_id": 85, "error_severity": 2,
                     "warning": "1 faulty memory elements detected on GPU 3"}]}],
     "test_summary": {"status": "Fail"}}]}]},
 "metadata": {"version": "4.2.3"}})";

// DCGM 3's shape: "DCGM GPU Diagnostic", results by gpu_id (a string), warnings as objects.
const char* kDcgm3 = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Integration", "tests": [
  {"name": "PCIe", "results": [{"gpu_id": "1", "status": "Warn",
    "warnings": [{"warning": "Clocks are being throttled for GPU 1"}]}]}]}]}})";

}  // namespace

TEST_CASE("health: dcgmi diag JSON of DCGM 4 becomes results and a blocking finding", "[health][dcgm]") {
  const DcgmDiag d = parse_dcgm_diag(kDcgm4, 226, 2);
  CHECK(d.ran);
  CHECK(d.why.empty());
  REQUIRE(d.results.size() == 3);
  CHECK(d.results[0] == DcgmResult{"Deployment: Persistence Mode", "GPU0", "pass", ""});
  CHECK(d.results[2] ==
        DcgmResult{"Hardware: Memory", "GPU3", "fail", "1 faulty memory elements detected on GPU 3"});
  Topology t;
  t.origin = "live";
  t.health.dcgm = d;
  const auto findings = health_findings(t);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].kind == "dcgm_diag_fail");
  CHECK(findings[0].device == "GPU3");
  CHECK(findings[0].source == "dcgmi");
  CHECK_FALSE(may_calibrate(findings));
}

TEST_CASE("health: dcgmi diag JSON of DCGM 3 is read too", "[health][dcgm]") {
  const DcgmDiag d = parse_dcgm_diag(kDcgm3, 0, 1);
  REQUIRE(d.results.size() == 1);
  CHECK(d.results[0] ==
        DcgmResult{"Integration: PCIe", "GPU1", "warn", "Clocks are being throttled for GPU 1"});
}

TEST_CASE("health: absent dcgmi is one line, unreadable output a warning, the level is checked",
          "[health][dcgm]") {
  FakeRunner runner;
  runner.answer.why = "dcgmi not found on PATH";
  const DcgmDiag absent = run_dcgm_diag(runner, 3);
  CHECK(runner.asked == std::vector<std::string>{"dcgmi", "diag", "-r", "3", "-j"});
  CHECK_FALSE(absent.ran);
  CHECK(absent.why == "dcgmi not found on PATH: DCGM diagnostics not run");
  Topology t;
  t.health.dcgm = absent;
  CHECK(health_findings(t).empty());  // not having DCGM is not a fault of the node

  runner.answer = {true, "", 255,
                   "Error: unable to establish a connection to the specified host: localhost\n"};
  const DcgmDiag garbled = run_dcgm_diag(runner, 1);
  CHECK(garbled.ran);
  CHECK(garbled.why ==
        "output of dcgmi diag (exit status 255) is not DCGM's JSON: Error: unable to establish a "
        "connection to the specified host: localhost");
  t.health.dcgm = garbled;
  const auto findings = health_findings(t);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].kind == "dcgm_diag_warn");

  CHECK_THROWS_AS(run_dcgm_diag(runner, 5), autotune::InputError);
}

TEST_CASE("health: the real command runner reports a program that is not there", "[health][dcgm]") {
  const auto runner = make_command_runner();
  const CommandOutput missing = runner->run({"nccl-autotune-no-such-program"});
  CHECK_FALSE(missing.started);
  CHECK(missing.why == "nccl-autotune-no-such-program not found on PATH");
  const CommandOutput echo = runner->run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  CHECK(echo.started);
  CHECK(echo.exit_status == 3);
  CHECK(echo.output == "out\nerr\n");
}
