// nccl-autotune tune end to end against the simulator: the command writes a valid profile whose rules beat
// NCCL's default where the simulator's truth says so, and a run killed midway resumes to the same profile.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_support.hpp"
#include "common/atomic_file.hpp"
#include "common/input_file.hpp"
#include "common/run_lock.hpp"
#include "measure/runner_factory.hpp"
#include "profiles/profile_toml.hpp"
#include "search/journal.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_model.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"
#include "topology/examples.hpp"

namespace fs = std::filesystem;
using namespace autotune;

using autotune::test::TempDir;

namespace {

using test::check_same_rules;
using test::kBinary;
using test::only_file;

int quiet_cli_status(const std::string& args) {
  int status = std::system((kBinary + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// "+4.1%..+7.5% (90%)", as profile show prints a rule's interval.
std::string report_gain(const profiles::Rule& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%%..%+.1f%% (%.0f%%)", r.gain->low * 100, r.gain->high * 100,
                r.gain->confidence * 100);
  return buf;
}

size_t count_lines(const fs::path& p) {
  std::ifstream in(p);
  return static_cast<size_t>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

}  // namespace

TEST_CASE("tune --simulate writes a valid simulated profile whose rules beat NCCL's default in truth") {
  for (std::string strategy : {"exhaustive", "adaptive"}) {
    const TempDir tmp(strategy);
    const fs::path dir = tmp.path();
    REQUIRE(quiet_cli_status("tune --simulate --example h100-8x --strategy " + strategy + " --store " +
                             dir.string()) == 0);
    auto profile = profiles::read_profile(only_file(dir, ".toml"));  // validates
    CHECK(profile.provenance.source == profiles::Source::simulated);
    CHECK_FALSE(profile.rules.empty());
    CHECK(fs::exists(only_file(dir, ".jsonl")));
    auto topo = topology::load_example("h100-8x");
    sim::SimModel model(sim::describe_cluster(topo, 1), {}, measure::RunnerOptions{}.deviations);
    for (const auto& r : profile.rules)
      for (uint64_t b = 8; b <= (8ull << 30); b *= 2) {
        if (b < r.min_bytes || b > r.max_bytes) continue;
        auto forced = model.resolve(r.collective, b, {r.algorithm, r.protocol, r.channels});
        REQUIRE(forced);
        double t_rule = model.true_time_us(r.collective, b, *forced);
        double t_default = model.true_time_us(r.collective, b, model.nccl_default(r.collective, b));
        INFO(strategy << " " << nccl::name(r.collective) << " " << b << " B " << nccl::name(r.algorithm)
                      << "/" << nccl::name(r.protocol));
        CHECK(t_rule < t_default);
      }
    fs::remove_all(dir);
  }
}

TEST_CASE("tune on an existing name without --resume keeps the previous journal whole and says so") {
  const TempDir tmp("keep-journal");
  const fs::path dir = tmp.path();
  const std::string args =
      "tune --simulate --example h100-8x --collectives allreduce --max-bytes 64K "
      "--store " +
      dir.string();
  REQUIRE(quiet_cli_status(args) == 0);
  const fs::path journal = only_file(dir, ".jsonl");
  const std::string first = autotune::read_file(journal);
  const fs::path err = dir / "stderr";
  int status = std::system((kBinary + " " + args + " >/dev/null 2>" + err.string()).c_str());
  REQUIRE(WEXITSTATUS(status) == 0);
  std::vector<fs::path> journals;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") journals.push_back(e.path());
  REQUIRE(journals.size() == 2);
  const fs::path kept = journals[0] == journal ? journals[1] : journals[0];
  CHECK(autotune::read_file(kept) == first);
  CHECK_THAT(autotune::read_file(err), Catch::Contains("journal is kept as " + kept.string()));
  fs::remove_all(dir);
}

TEST_CASE("a second calibration of the same store and name is refused at once, the journal untouched") {
  const TempDir tmp("locked");
  const fs::path dir = tmp.path();
  const std::string args =
      "tune --simulate --example h100-8x --collectives allreduce --max-bytes 64K --store " + dir.string();
  REQUIRE(quiet_cli_status(args) == 0);
  const fs::path journal = only_file(dir, ".jsonl");
  const std::string before = autotune::read_file(journal);
  // This process holds the calibration's lock as a running tune would; the command is another process.
  const RunLock held = search::lock_journal(journal, "a calibration of the test");
  const fs::path err = dir / "stderr";
  for (const char* extra : {" --resume", ""}) {
    int status = std::system((kBinary + " " + args + extra + " >/dev/null 2>" + err.string()).c_str());
    CHECK(WEXITSTATUS(status) == 2);
    CHECK_THAT(autotune::read_file(err), Catch::Contains("found a calibration of the test (host ") &&
                                             Catch::Contains("pid " + std::to_string(::getpid())));
  }
  CHECK(autotune::read_file(journal) == before);
  std::vector<fs::path> journals;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") journals.push_back(e.path());
  CHECK(journals.size() == 1);  // nothing renamed aside
  fs::remove_all(dir);
}

TEST_CASE("profile show and export by cluster name keep the rules' evidence") {
  const TempDir tmp("show-by-name");
  const fs::path dir = tmp.path();
  REQUIRE(quiet_cli_status(
              "tune --simulate --example h100-8x --nodes 2 --collectives allreduce --max-bytes 64M --store " +
              dir.string()) == 0);
  const fs::path file = only_file(dir, ".toml");
  const auto profile = profiles::read_profile(file);
  REQUIRE_FALSE(profile.rules.empty());
  REQUIRE(profile.rules[0].gain);
  CHECK(profile.cluster.nics_per_node == 8);  // the example's NICs (every profile said 0)
  for (std::string how : {file.string(), std::string("h100-8x-2n-sim")}) {
    INFO(how);
    const fs::path show = dir / "show", exported = dir / "export";
    std::system(
        (kBinary + " profile show " + how + " --store " + dir.string() + " > " + show.string()).c_str());
    std::system((kBinary + " profile export " + how + " --format toml --store " + dir.string() + " > " +
                 exported.string())
                    .c_str());
    CHECK_THAT(autotune::read_file(show), Catch::Contains(report_gain(profile.rules[0])));
    CHECK(profiles::parse_profile(autotune::read_file(exported), "export").rules[0].gain ==
          profile.rules[0].gain);
  }
  fs::remove_all(dir);
}

TEST_CASE("tune --simulate killed midway resumes to the same profile") {
  const TempDir whole_tmp("whole");
  const fs::path whole = whole_tmp.path();
  const TempDir killed_tmp("killed");
  const fs::path killed = killed_tmp.path();
  // One collective up to 64 MiB: every default shape and NIC setting, some rules, about 3,400 journal lines
  // (resuming does not depend on how many collectives or how large; all five took 8x as long).
  const std::string common =
      "tune --simulate --example h100-8x-2nic --nodes 2 --strategy exhaustive --seed 7 --collectives "
      "allreduce "
      "--max-bytes 64M ";
  REQUIRE(quiet_cli_status(common + "--store " + whole.string()) == 0);
  auto reference = profiles::read_profile(only_file(whole, ".toml"));
  REQUIRE_FALSE(reference.rules.empty());  // something to resume to

  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execl(kBinary.c_str(), kBinary.c_str(), "tune", "--simulate", "--example", "h100-8x-2nic", "--nodes",
            "2", "--strategy", "exhaustive", "--seed", "7", "--collectives", "allreduce", "--max-bytes",
            "64M", "--store", killed.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Kill it once the journal holds some batches.
  bool killed_midway = false;
  for (int i = 0; i < 20000; ++i) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) break;
    fs::path journal;
    for (const auto& e : fs::directory_iterator(killed))
      if (e.path().extension() == ".jsonl") journal = e.path();
    if (!journal.empty() && count_lines(journal) > 100) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      killed_midway = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  fs::path journal = only_file(killed, ".jsonl");
  if (!killed_midway) {
    // The run finished before it could be killed: cut its journal to a third, mid-line, as a kill would.
    WARN("the run finished before the kill; simulating the kill by truncating the journal");
    std::string text = read_file(journal);
    write_file_atomically(journal, text.substr(0, text.size() / 3));
    for (const auto& e : fs::directory_iterator(killed))
      if (e.path().extension() == ".toml") fs::remove(e.path());
  }
  size_t lines_before = count_lines(journal);
  REQUIRE(quiet_cli_status(common + "--resume --store " + killed.string()) == 0);
  CHECK(count_lines(journal) > lines_before);
  check_same_rules(reference, profiles::read_profile(only_file(killed, ".toml")));
  fs::remove_all(whole);
  fs::remove_all(killed);
}

TEST_CASE("tune: bad options are input errors (exit 2)") {
  const TempDir tmp("bad");
  const fs::path dir = tmp.path();
  CHECK(quiet_cli_status("tune --simulate --strategy greedy --store " + dir.string()) == 2);
  CHECK(quiet_cli_status("tune --simulate --min-bytes 1M --max-bytes 8 --store " + dir.string()) == 2);
  CHECK(quiet_cli_status("tune --simulate --budget soon --store " + dir.string()) == 2);
  CHECK(quiet_cli_status("tune --example h100-8x --store " + dir.string()) == 2);
  CHECK(quiet_cli_status("tune --simulate --dry-run --store " + dir.string()) == 0);
  CHECK(fs::is_empty(dir));  // a dry run measures and writes nothing
  fs::remove_all(dir);
}

TEST_CASE("tune --simulate under mpirun -np 4 gives the profile one process gives") {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    AUTOTUNE_SKIP("mpirun not found: multi-process tune not tested");
  }
  const TempDir one_tmp("mpi-one");
  const fs::path one = one_tmp.path();
  const TempDir four_tmp("mpi-four");
  const fs::path four = four_tmp.path();
  const std::string args = " tune --simulate --example h100-8x --collectives allreduce,allgather --seed 3 ";
  REQUIRE(quiet_cli_status(args + "--store " + one.string()) == 0);
  int status = std::system(("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun "
                            "--oversubscribe -np 4 " +
                            kBinary + args + "--store " + four.string() + " >/dev/null 2>&1")
                               .c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  check_same_rules(profiles::read_profile(only_file(one, ".toml")),
                   profiles::read_profile(only_file(four, ".toml")));
  fs::remove_all(one);
  fs::remove_all(four);
}

TEST_CASE("empty option values and names that are no file name are refused before any work, exit 2") {
  // What the bad-inputs table cannot pass: an empty argument, a name with a newline (through the shell).
  const TempDir tmp("empty-values");
  const fs::path err = tmp.path() / "stderr";
  const std::string store = " --store " + (tmp.path() / "store").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tune --simulate --budget ''" + store,
       "--budget: expected a duration with units, like 20m, 90s or "
       "1h30m, found ''"},
      {"tune --simulate --collectives ''" + store,
       "--collectives: expected names from broadcast, reduce, allgather, reducescatter, allreduce; found ''"},
      {"tune --simulate --name \"$(printf 'a\\nb')\"" + store,
       "--name \"a\\x0ab\": expected 1 to 100 letters"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const int status = std::system((kBinary + " " + args + " >/dev/null 2>" + err.string()).c_str());
    CHECK(WEXITSTATUS(status) == 2);
    const std::string said = autotune::read_file(err);
    CHECK_THAT(said, Catch::Contains(message));
    CHECK(std::count(said.begin(), said.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(tmp.path() / "store"));
}

TEST_CASE("tune --dry-run without --simulate plans a recorded node at the launcher's or --nodes' count") {
  const TempDir tmp("gpu-plan");
  const fs::path dir = tmp.path(), node = dir / "node.json", store = dir / "store", out = dir / "plan.txt";
  auto status = [](const std::string& args) {
    const int st = std::system(("env -u SLURM_JOB_ID -u SLURM_NNODES " + kBinary + " " + args).c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  REQUIRE(status("probe --example h100-8x --format json >" + node.string()) == 0);
  const std::string common =
      " --topology " + node.string() + " --store " + store.string() + " >" + out.string() + " 2>&1";
  REQUIRE(status("tune --dry-run --launcher 'srun -N 8 --ntasks-per-node 8'" + common) == 0);
  const std::string text = autotune::read_file(out);
  CHECK_THAT(text, Catch::Contains("planned for 8 node(s) (the launcher) of 8 GPUs (--topology") &&
                       Catch::Contains("total: ") && Catch::Contains("on 8 node(s)") &&
                       Catch::Contains("node-hours of the whole allocation") &&
                       Catch::Contains("round 3 (") &&
                       Catch::Contains("round 3 (255 s): 4x1 on nodes 0-3; 4x8 on nodes 4-7\n"));
  for (const char* shape : {"\n1x8 ", "\n2x1 ", "\n8x8 "}) CHECK_THAT(text, Catch::Contains(shape));

  REQUIRE(status("tune --dry-run --nodes 4 --format json" + common) == 0);
  const auto plan = nlohmann::json::parse(autotune::read_file(out));
  CHECK(plan["nodes"] == 4);
  uint64_t sum = 0;
  std::vector<std::string> shapes;
  for (const auto& s : plan["scales"]) {
    shapes.push_back(s["shape"]);
    sum += s["measurements"].get<uint64_t>();
  }
  CHECK(shapes == std::vector<std::string>{"1x8", "2x1", "2x8", "4x1", "4x8"});
  CHECK(sum == plan["measurements"].get<uint64_t>());
  CHECK(plan["concurrent"]["seconds"].get<double>() < plan["sequential"]["seconds"].get<double>());
  CHECK(plan["rounds"].size() == 4);  // 4x1, 4x8, 2x1 beside 2x8, then 1x8 (13 node-slots > 3 x 4)

  // What cannot be planned is said before anything is done; nothing is written.
  CHECK(status("tune --dry-run --launcher 'mpirun -np 32'" + common) == 2);
  CHECK_THAT(autotune::read_file(out), Catch::Contains("give --nodes N"));
  CHECK(status("tune --nodes 4 --store " + store.string()) == 2);
  CHECK_FALSE(fs::exists(store));
}
