// [online] and the rules' runner-up in the profile (validated like every other key: file, line, what was
// expected), and the telemetry file the plugin writes and `learn` reads (whole or refused, naming the line).
#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/telemetry_file.hpp"

using namespace autotune;
using namespace autotune::profiles;

namespace {

const char* kHead = R"(schema = 1
[cluster]
name = "c"
fingerprint = ""
gpu_model = ""
gpus_per_node = 8
nodes = 2
nics_per_node = 0
[provenance]
created = "2026-06-01T12:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "measured"
command = "t"
)";  // 14 lines: what a test appends starts on line 15

std::string error_of_tail(const std::string& tail) {
  try {
    parse_profile(std::string(kHead) + tail, "p.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

Telemetry sample() {
  Telemetry t;
  t.digest = "0123456789abcdef";
  t.cluster = "my cluster";
  t.nccl_version = "2.28.9";
  t.job = "42";
  t.rank = "rank3";
  t.host = "node7";
  t.written = 1700000000;
  TelemetryRow r;
  r.nodes = 2, r.ranks = 16, r.ranks_per_node = 8, r.bytes_log2 = 20, r.channels = 8, r.count = 1000;
  r.mean_bytes = 1048576, r.mean_us = 50, r.p25_us = 45, r.p50_us = 49, r.p75_us = 55, r.p90_us = 60;
  r.p99_us = 80, r.min_us = 40, r.max_us = 90;
  t.rows = {r, r};
  t.rows[1].protocol = nccl::Protocol::ll;
  return t;
}

}  // namespace

TEST_CASE("online profile: [online] and runner_up read, and write back the same", "[online]") {
  const std::string tail = R"([online]
telemetry = true
explore = 0.01
[[rule]]
collective = "allreduce"
min_bytes = 0
max_bytes = "64K"
algorithm = "tree"
protocol = "ll"
busbw_gbps = 10
runner_up = "ring/ll/8"
runner_up_busbw_gbps = 9.5
)";
  Profile p = parse_profile(std::string(kHead) + tail, "p.toml");
  REQUIRE(p.online);
  CHECK(p.online->telemetry);
  CHECK(p.online->explore == 0.01);
  REQUIRE(p.rules.at(0).runner_up);
  CHECK(p.rules[0].runner_up->algorithm == nccl::Algorithm::ring);
  CHECK(p.rules[0].runner_up->channels == 8);
  CHECK(p.rules[0].runner_up->busbw_gbps == 9.5);
  Profile again = parse_profile(format_profile(p), "again.toml");
  CHECK(again.online == p.online);
  CHECK(again.rules.at(0).runner_up == p.rules[0].runner_up);
  Profile none = parse_profile(kHead, "p.toml");
  CHECK_FALSE(none.online);  // absent means off: no events, no telemetry, no exploration
  CHECK(format_profile(none).find("[online]") == std::string::npos);
}

TEST_CASE("online profile: bad [online] values are refused with the file, line and what was expected",
          "[online]") {
  CHECK(error_of_tail("[online]\ntelemetry = \"yes\"\n") ==
        "p.toml:16: online.telemetry: expected true or false; found string \"yes\"");
  CHECK(error_of_tail("[online]\nexplore = 0.9\n") ==
        "p.toml:16: online.explore: expected a fraction of calls 0..0.5 (0.01 = one call in a hundred); "
        "found 0.9");
  CHECK(error_of_tail("[online]\nexplore = \"some\"\n")
            .find("p.toml:16: online.explore: expected a fraction") == 0);
  CHECK(error_of_tail("[online]\nlearn = true\n") ==
        "p.toml:16: online.learn: expected one of telemetry, explore; found an unknown key");
}

TEST_CASE("online profile: a bad runner_up is refused naming its line", "[online]") {
  const std::string rule =
      "[[rule]]\ncollective = \"allgather\"\nmin_bytes = 0\nmax_bytes = 1\nalgorithm = "
      "\"ring\"\nprotocol = \"simple\"\n";
  CHECK(error_of_tail(rule + "runner_up = \"tree/ll/0\"\nrunner_up_busbw_gbps = 1\n")
            .find("p.toml:21: rule[1].runner_up: expected a candidate NCCL can run for allgather") == 0);
  CHECK(error_of_tail(rule + "runner_up = \"ring/ll\"\nrunner_up_busbw_gbps = 1\n")
            .find("p.toml:21: rule[1].runner_up: expected \"algorithm/protocol/channels\"") == 0);
  CHECK(error_of_tail(rule + "runner_up = \"ring/ll/4\"\n")
            .find("expected runner_up and runner_up_busbw_gbps together") != std::string::npos);
}

TEST_CASE("telemetry file: written and read back whole", "[online]") {
  const Telemetry t = sample();
  const std::string text = format_telemetry(t);
  Telemetry back = parse_telemetry(text, "t.telemetry");
  CHECK(back.digest == t.digest);
  CHECK(back.cluster == "my_cluster");  // words keep no whitespace
  CHECK(back.rank == "rank3");
  REQUIRE(back.rows.size() == 2);
  CHECK(back.rows[1].protocol == nccl::Protocol::ll);
  CHECK(back.rows[0].p75_us == 55);
  CHECK(back.rows[0].line > 0);
  CHECK(telemetry_file_name(t.digest, "job 1", "rank3") == "0123456789abcdef-job_1-rank3.telemetry");
}

TEST_CASE("telemetry file: a file cut short, a bad row or a foreign file is refused naming the line",
          "[online]") {
  const std::string text = format_telemetry(sample());
  auto error = [](const std::string& s) {
    try {
      parse_telemetry(s, "t.telemetry");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // Cut at every byte but the whole: never accepted.
  for (size_t n = 0; n + 1 < text.size(); n += 7) CHECK(error(text.substr(0, n)) != "(no error)");
  CHECK(error(text.substr(0, text.rfind("end"))).find("expected an `end` line; found the file cut short") !=
        std::string::npos);
  CHECK(error("{\"journal\": 1}\n") ==
        "t.telemetry:1: expected \"# nccl-autotune telemetry\" (a telemetry file); found another file");
  std::string bad_row = text;
  bad_row.replace(bad_row.find(" ring "), 6, " rung ");
  INFO(error(bad_row));
  CHECK(error(bad_row).find("t.telemetry:11: expected an algorithm and a protocol") == 0);
}

TEST_CASE("telemetry file: bounded in size, rows beyond the bound left out and said", "[online]") {
  Telemetry t = sample();
  t.rows.assign(20000, t.rows[0]);
  const std::string text = format_telemetry(t);
  CHECK(text.size() <= kMaxTelemetryBytes);
  Telemetry back = parse_telemetry(text, "t.telemetry");
  CHECK(back.truncated);
  CHECK(back.rows.size() < t.rows.size());
}
