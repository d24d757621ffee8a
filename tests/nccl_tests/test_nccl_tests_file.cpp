// Files of nccl-tests output as people publish them: several tests per file in the formats of nccl-tests 2.0
// (a harness's Running: lines, the error column) to 2.19.6 (Collective test starting/concluded, double, half
// and bfloat16, -G), -J JSON (format version 3), and a table pasted without its header. The fixtures are
// synthetic logs written for these tests in each version's layout.
#include <catch2/catch.hpp>
#include <string>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "nccl_tests/nccl_tests_file.hpp"
#include "nccl_tests/nccl_tests_json.hpp"
#include "tests/nccl_tests/fixture_path.hpp"

using namespace autotune;
using namespace autotune::nccl_tests;
using autotune::nccl_tests::test::fixture;

namespace {}  // namespace

TEST_CASE("nccl-tests 2.19.6: five tests in one file, each with its own collective, type and lines") {
  auto f = read_nccl_tests_file(fixture("several_tests_v2.19.log"));
  REQUIRE(f.tests.size() == 5);
  CHECK(f.unreadable.empty());
  const char* programs[] = {"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "alltoall_perf",
                            "all_reduce_perf"};
  const char* types[] = {"double", "half", "bfloat16", "float", "float"};
  int previous_last = 0;
  for (size_t i = 0; i < 5; ++i) {
    const NcclTestsLog& t = f.tests[i];
    CHECK(t.header.program == programs[i]);
    CHECK(t.header.tests_version == "2.19.6");
    CHECK(t.rows.front().type == types[i]);
    CHECK(t.rows.size() == 9);
    CHECK(t.ranks() == 16);
    CHECK(t.hosts() == 2);
    CHECK(t.nccl_nodes == 2);
    CHECK_FALSE(t.truncated);
    // The tests follow each other without gaps or overlaps; each starts at its version line.
    CHECK(t.first_line == previous_last + 1);
    CHECK(t.last_line > t.first_line);
    previous_last = t.last_line;
  }
  CHECK(f.tests[0].collective == "allreduce");
  CHECK(f.tests[1].collective == "allgather");
  CHECK(f.tests[1].header.graph == 1);  // all_gather_perf -G 1
  CHECK(f.tests[0].header.graph == 0);
  CHECK(f.tests[2].collective == "reducescatter");
  CHECK(f.tests[3].collective == "alltoall");
  CHECK(f.tests[0].first_line == 1);  // the lines before the first header belong to the first test
  CHECK(f.tests[1].first_line == 45);
  CHECK(f.tests[0].nccl_version == "2.28.9");
  // bfloat16 sizes are whole buffers of 2-byte words; the wrong row is the 4 MiB one.
  const NcclTestsLog& rs = f.tests[2];
  CHECK(rs.rows[3].bytes == 65536);
  CHECK(rs.rows[3].count == 65536 / 2 / 16);
  int wrong = 0;
  for (const auto& r : rs.rows) wrong += r.wrong() ? 1 : 0;
  CHECK(wrong == 1);
  CHECK(rs.rows[6].wrong());
  CHECK(rs.rows[6].bytes == 4194304);
  CHECK(f.tests.back().name() == fixture("several_tests_v2.19.log") + ":171-212 (all_reduce_perf)");
}

TEST_CASE("the oldest format: Running: lines name each program, a test that crashed is set aside") {
  auto f = read_nccl_tests_file(fixture("several_tests_oldest.log"));
  REQUIRE(f.tests.size() == 3);
  REQUIRE(f.unreadable.size() == 1);
  CHECK(f.unreadable[0].where == fixture("several_tests_oldest.log") + ":56-70");
  CHECK(f.unreadable[0].reason.find("ends before its result table") != std::string::npos);
  CHECK(f.tests[0].collective == "allreduce");
  CHECK(f.tests[1].collective == "allgather");
  CHECK(f.tests[2].collective == "broadcast");
  for (const auto& t : f.tests) {
    CHECK(t.header.old_error_column);
    CHECK(t.header.tests_version.empty());
    CHECK(t.ranks() == 8);
    CHECK(t.rows.size() >= 8);
  }
  // The harness exported NCCL_ALGO on the mpirun line of the first test only.
  CHECK(f.tests[0].env_algo == "Tree");
  CHECK_FALSE(f.tests[1].env_algo.has_value());
  CHECK(f.tests[2].rows[0].root == 0);
  CHECK(f.tests[0].first_line == 1);
  CHECK(f.tests[1].first_line == 29);
}

TEST_CASE("split_tests: a marker starts a test only once the previous one has shown its header") {
  const std::string text =
      "noise\n"
      "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#       size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
      "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
      "# Collective test starting: all_gather_perf\n"
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
      "[1,0]<stdout>:Running: ./reduce_perf\n"
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n";
  auto ranges = split_tests(text);
  REQUIRE(ranges.size() == 3);
  CHECK(ranges[0] == std::pair{1, 5});
  CHECK(ranges[1] == std::pair{6, 8});
  CHECK(ranges[2] == std::pair{9, 10});
  CHECK(split_tests("") == std::vector<std::pair<int, int>>{{1, 1}});
}

TEST_CASE("a file whose every test is unreadable names each test and its reason") {
  const std::string text =
      "Running: ./build/all_reduce_perf\n"
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
      "Running: ./build/all_gather_perf\n"
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n";
  try {
    parse_nccl_tests_file(text, "both.log");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "both.log");
    CHECK(e.message().find(
              "2 unreadable ones (both.log:1-2: the nccl-tests log ends before its result table") !=
          std::string::npos);
    CHECK(e.message().find("both.log:3-4: ") != std::string::npos);
  }
  // A single test keeps the parser's own error and line.
  CHECK_THROWS_WITH(parse_nccl_tests_file("# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup "
                                          "iters: 5 iters: 20\n",
                                          "one.log"),
                    Catch::StartsWith("one.log:1: the nccl-tests log ends before its result table"));
}

TEST_CASE("a table alone: read, but it shows neither ranks nor hosts") {
  auto f = read_nccl_tests_file(fixture("table_only_all_reduce.log"));
  REQUIRE(f.tests.size() == 1);
  const NcclTestsLog& t = f.tests[0];
  CHECK(t.collective == "allreduce");  // from the file name
  CHECK(t.ranks() == 0);
  CHECK(t.hosts() == 0);
  CHECK(t.rows.size() == 7);
  CHECK(t.footer.avg_busbw_gbps.has_value());
}

TEST_CASE("nccl-tests -J JSON (format version 3): two documents, every field where the text log has it") {
  auto f = read_nccl_tests_file(fixture("nccl_tests_v2.19.6.json"));
  REQUIRE(f.tests.size() == 2);
  const NcclTestsLog& ar = f.tests[0];
  CHECK(ar.collective == "allreduce");
  CHECK(ar.header.program == "all_reduce_perf");
  CHECK(ar.first_line == 1);
  CHECK(f.tests[1].first_line == 2);
  CHECK(f.tests[1].collective == "allgather");
  CHECK(ar.header.nccl_library == 22809);
  CHECK(ar.header.threads == 1);
  CHECK(ar.header.gpus_per_thread == 8);
  CHECK(ar.header.min_bytes == 4096);
  CHECK(ar.header.step == 4);
  CHECK(ar.header.step_is_factor);
  CHECK(ar.header.validation == 1);
  CHECK(ar.ranks() == 8);  // one device entry per process, 8 GPUs in it
  CHECK(ar.hosts() == 1);
  CHECK(ar.header.ranks[0].gpu_name == "NVIDIA H200");
  CHECK(ar.env_algo == "NVLS");
  CHECK(ar.env_proto == "Simple");
  REQUIRE(ar.rows.size() == 9);
  CHECK(ar.rows[0].bytes == 4096);
  CHECK(ar.rows[0].count == 1024);
  CHECK(ar.rows[0].root == -1);
  CHECK(ar.rows[0].redop == "sum");
  CHECK(ar.rows[0].out_of_place.time_us == Approx(18.082692));
  CHECK(ar.rows[0].in_place.busbw_gbps == Approx(0.392928));
  CHECK(ar.rows[0].out_of_place.check == 0.0);
  CHECK_FALSE(ar.rows[0].wrong());
  CHECK(ar.footer.out_of_bounds == 0);
  CHECK(ar.footer.avg_busbw_gbps.has_value());
  CHECK_FALSE(ar.truncated);
  CHECK(ar.warnings.empty());
}

TEST_CASE("nccl-tests JSON: nan, null nwrong, cpu_time, trace replay and every malformed document") {
  const std::string base =
      R"({"version":3,"args":["/opt/nccl-tests/build/reduce_perf"],"env":[],"nccl_version":22809,)"
      R"("config":{"nthreads":1,"ngpus":4,"minimum_bytes":8,"maximum_bytes":16,"step_factor":2,"warmup_iters":1,)"
      R"("iterations":5,"validation":0,"graph":0,"devices":[{"rank":0,"group":0,"pid":1,"hostname":"a",)"
      R"("device":0,"device_hex":"0000:01:00","device_info":"GPU"}]},"results":[)";
  const std::string row8 =
      R"({"size":8,"count":2,"type":"float","redop":"sum","root":"     0","out_of_place":{"cpu_time":"nan",)"
      R"("alg_bw":0.0,"bus_bw":0.0,"nwrong":null},"in_place":{"cpu_time":5.0,"alg_bw":0.0,"bus_bw":0.0,"nwrong":null}})";
  const std::string replay =
      R"({"size":16,"count":4,"type":"float","redop":"sum","root":0,"out_of_place":null,)"
      R"("in_place":{"time":5.0,"alg_bw":0.0,"bus_bw":0.0,"nwrong":null}})";
  auto logs = parse_nccl_tests_json(base + row8 + "," + replay + "]}", "r.json");
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].collective == "reduce");
  REQUIRE(logs[0].rows.size() == 1);
  CHECK(std::isnan(logs[0].rows[0].out_of_place.time_us));
  CHECK(logs[0].rows[0].in_place.time_us == 5.0);
  CHECK(logs[0].rows[0].root == 0);
  CHECK_FALSE(logs[0].rows[0].out_of_place.check.has_value());
  CHECK(logs[0].truncated);  // no out_of_bounds / average_bus_bandwidth
  bool replay_warned = false;
  for (const auto& w : logs[0].warnings)
    replay_warned |= w.text.find("results[1] (16 B) has no out-of-place") == 0;
  CHECK(replay_warned);

  auto refused = [&](const std::string& text, const std::string& message) {
    INFO(text);
    CHECK_THROWS_WITH(parse_nccl_tests_json(text, "bad.json"), Catch::Contains(message));
  };
  refused(base + row8 + "]", "ends before its closing brace");
  refused(R"({"version":4,"results":[]})", "expected nccl-tests' JSON format version 1 to 3");
  refused(R"({"a":1})", "(a 'version' and a 'results' field)");
  refused(R"({"version":3,"results":[],"args":[],"nccl_version":1,"config":{}})", "config.nthreads");
  refused(base + "]}", "holds no result");
  std::string bad_size = row8;
  bad_size.replace(bad_size.find("\"size\":8"), 8, "\"size\":-8");
  refused(base + bad_size + "]}", "expected results[0].size to be a whole number in range, found -8");
  std::string bad_root = row8;
  bad_root.replace(bad_root.find("\"     0\""), 8, "\"x\"");
  refused(base + bad_root + "]}", "expected results[0].root to be a rank or -1");
  refused("{\"version\":3, \"results\": [1,]}", "expected nccl-tests' JSON output: ");
  refused("{\"version\":3}\nx", "bad.json:2: expected a JSON object");
  std::string unnamed = base;
  unnamed.replace(unnamed.find("/opt/nccl-tests/build/reduce_perf"), 33, "./mytest");
  CHECK_THROWS_WITH(parse_nccl_tests_json(unnamed + row8 + "]}", "out.json"),
                    Catch::Contains("--collective"));
  CHECK(parse_nccl_tests_json(unnamed + row8 + "]}", "out.json", "reduce")[0].collective == "reduce");
}

TEST_CASE("looks_like_json: the first character that is not blank decides") {
  CHECK(looks_like_json("  \n {\"version\":3}"));
  CHECK_FALSE(looks_like_json("# nThread 1"));
  CHECK_FALSE(looks_like_json(""));
}
