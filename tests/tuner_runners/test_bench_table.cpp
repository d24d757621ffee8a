#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "nccl_tests/bench_table.hpp"

using namespace autotune;
using namespace autotune::nccl_tests;
using namespace autotune::runners;

TEST_CASE("nccl-tests' size syntax and sweep", "[bench]") {
  CHECK(parse_size("8") == 8);
  CHECK(parse_size("64K") == 65536);
  CHECK(parse_size("1m") == 1048576);
  CHECK(parse_size("8G") == 8ULL << 30);
  CHECK_THROWS_AS(parse_size("8X"), InputError);
  CHECK_THROWS_AS(parse_size(""), InputError);
  CHECK_THROWS_AS(parse_size("G"), InputError);
  CHECK_THROWS_AS(parse_size("1GB"), InputError);
  auto s = size_sweep(8, 8ULL << 30, 2);
  CHECK(s.size() == 31);
  CHECK(s.front() == 8);
  CHECK(s.back() == 8ULL << 30);
  CHECK(size_sweep(8, 100, 4) == std::vector<uint64_t>{8, 32});
  CHECK_THROWS_AS(size_sweep(0, 8, 2), InputError);
  CHECK_THROWS_AS(size_sweep(16, 8, 2), InputError);
  CHECK_THROWS_AS(size_sweep(8, 16, 1), InputError);
}

TEST_CASE("The table follows nccl-tests' layout and says simulated or stand-in loudly", "[bench]") {
  RunnerInfo info;
  info.source = "simulated";
  info.description = "SIMULATED: test";
  info.ranks = 8;
  Measurement ok;
  ok.request.bytes = 1024;
  ok.times_us = {10.0};
  ok.algbw_gbps = 0.1024;
  ok.busbw_gbps = 0.1792;
  ok.used_algorithm = nccl::Algorithm::ring;
  ok.used_protocol = nccl::Protocol::ll;
  ok.used_channels = 2;
  Measurement bad = ok;
  bad.outcome = Outcome::unsupported;
  bad.detail = "NVLS needs NVSwitches";
  std::vector<Measurement> rows = {ok, bad};
  std::string t = format_table(info, rows);
  CHECK(t.rfind("# simulated", 0) == 0);
  CHECK(t.find("#wrong") != std::string::npos);
  CHECK(t.find("        1024          256    float    sum     -1       10.00     0.10     0.18      0  "
               "ring/ll/ch2") != std::string::npos);
  CHECK(t.find("unsupported: NVLS needs NVSwitches") != std::string::npos);
  CHECK(t.find("Avg bus bandwidth    : 0.179") != std::string::npos);
  info.source = "standin";
  std::string standin = format_table(info, rows);
  CHECK(standin.rfind("# stand-in: the stand-in NCCL of tests/standin ran these", 0) == 0);
  CHECK(standin.find("(forced: default)  [stand-in]") != std::string::npos);
  CHECK(standin.find("Avg bus bandwidth    : 0.179  (stand-in)") != std::string::npos);
  info.source = "measured";
  CHECK(format_table(info, rows).find("simulated") == std::string::npos);
  CHECK(format_table(info, rows).find("stand-in") == std::string::npos);
  std::string j = format_json(info, rows);
  CHECK(j.find("\"outcome\": \"unsupported\"") != std::string::npos);
  CHECK(j.find("\"algorithm\": \"ring\"") != std::string::npos);
}
