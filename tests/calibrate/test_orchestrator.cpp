// The orchestrator of `tune`: launcher words, job command lines, and whole calibrations whose jobs run as
// worker processes through a launcher (mpirun, a fake launcher that fails one job), resumed job by job.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "calibrate/orchestrator.hpp"
#include "cli_test_support.hpp"
#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "profiles/profile_toml.hpp"
#include "search/journal.hpp"
#include "support/fake_process_launcher.hpp"
#include "support/manual_clock.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using namespace autotune::search;
using namespace autotune::calibrate;
using Words = std::vector<std::string>;

using autotune::test::TempDir;

namespace {

using test::check_same_rules;
using test::kBinary;
using test::only_file;
// Two jobs: NCCL's defaults and NCCL_CROSS_NIC=1; a small grid keeps each job to a fraction of a second.
// The simulated truth has a real gain there (reducescatter around 2 MiB) for the profile to find.
const std::string kTune =
    " tune --simulate --example h100-8x-2nic --nodes 2 --cross-nic 1 --collectives reducescatter "
    "--min-bytes 64K --max-bytes 8M --strategy exhaustive --reps 3 --seed 11 ";

// Runs a shell line; stdout and stderr go to `out`.
int run(const std::string& line, const fs::path& out) {
  int status = std::system((line + " >" + out.string() + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A launcher script that records each start, fails the NCCL_CROSS_NIC=1 job when asked to, and runs the rest.
fs::path fake_launcher(const fs::path& dir, bool fail_cross_nic) {
  fs::path script = dir / (fail_cross_nic ? "failing-launcher.sh" : "launcher.sh");
  std::string text = "#!/bin/sh\necho start >> '" + (dir / "starts").string() + "'\n";
  if (fail_cross_nic)
    text += "if [ \"$NCCL_CROSS_NIC\" = 1 ]; then echo 'fabric says no: port 7 down' >&2; exit 3; fi\n";
  text += "exec \"$@\"\n";
  write_file_atomically(script, text);
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

size_t starts(const fs::path& dir) {
  std::ifstream in(dir / "starts");
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

std::string slurp(const fs::path& p) {
  return read_file(p);
}

}  // namespace

TEST_CASE("launcher strings split by shell quoting rules without expansion") {
  CHECK(split_shell_words("srun -N 2 --ntasks-per-node 8") ==
        Words{"srun", "-N", "2", "--ntasks-per-node", "8"});
  CHECK(split_shell_words("  mpirun\t-np 16  -H a:8,b:8 ") == Words{"mpirun", "-np", "16", "-H", "a:8,b:8"});
  CHECK(split_shell_words("mpirun --mca btl '^openib' -x \"A B\"") ==
        Words{"mpirun", "--mca", "btl", "^openib", "-x", "A B"});
  CHECK(split_shell_words("a\\ b \"q\\\"x\" 'it''s' $HOME") == Words{"a b", "q\"x", "its", "$HOME"});
  CHECK(split_shell_words("x '' \"\"") == Words{"x", "", ""});
  CHECK(split_shell_words("").empty());
  CHECK_THROWS_AS(split_shell_words("srun 'unclosed"), InputError);
  CHECK_THROWS_AS(split_shell_words("srun \"unclosed"), InputError);
  CHECK_THROWS_AS(split_shell_words("srun \\"), InputError);
}

TEST_CASE("job command lines: mpirun is told which variables to forward and srun exports all") {
  runners::ProcessSetting cross{"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}};
  calibrate::Launcher mpi{{"/opt/ompi/bin/mpirun", "-np", "16"}, "--launcher"};
  CHECK(calibrate::job_command(mpi, "/bin/nccl-autotune", {"tune", "--worker"}, cross) ==
        Words{"/opt/ompi/bin/mpirun", "-x", "NCCL_CROSS_NIC", "-np", "16", "/bin/nccl-autotune", "tune",
              "--worker"});
  calibrate::Launcher srun{{"srun", "-N", "2"}, "--launcher"};
  CHECK(calibrate::job_command(srun, "/x", {"tune"}, cross) == Words{"srun", "-N", "2", "/x", "tune"});
  CHECK(calibrate::job_command({}, "/x", {"tune"}, cross) == Words{"/x", "tune"});
  CHECK(calibrate::launcher_nodes({"srun", "-N", "4"}) == 4);
  CHECK(calibrate::launcher_nodes({"srun", "--nodes=3"}) == 3);
  CHECK(calibrate::launcher_nodes({"mpirun", "-np", "16", "-H", "a:8,b:8"}) == 2);
  CHECK_FALSE(calibrate::launcher_nodes({"mpirun", "-np", "16"}));
  CHECK(calibrate::launcher_ranks_per_node({"srun", "-N", "4", "--ntasks-per-node", "2"}) == 2);
  CHECK(calibrate::launcher_ranks_per_node({"srun", "--ntasks-per-node=4"}) == 4);
  CHECK(calibrate::launcher_ranks_per_node({"mpirun", "-np", "16", "-H", "a:8,b:8"}) == 8);
  CHECK_FALSE(calibrate::launcher_ranks_per_node({"mpirun", "-np", "16", "-H", "a,b"}));
  CHECK_FALSE(calibrate::launcher_ranks_per_node({"srun", "--ntasks-per-node", "0"}));
  CHECK_FALSE(calibrate::launcher_ranks_per_node({"srun", "-N", "4"}));
}

TEST_CASE("the launcher: the given one or srun inside a Slurm allocation or none") {
  std::map<std::string, std::string> slurm = {{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "2"}};
  auto given = calibrate::choose_launcher("mpirun -np 2", false, 8, slurm);
  CHECK(given.words == Words{"mpirun", "-np", "2"});
  CHECK(given.origin == "--launcher");
  auto detected = calibrate::choose_launcher("", false, 8, slurm);
  CHECK(detected.words == Words{"srun", "--ntasks-per-node", "8", "-N", "2"});
  CHECK(detected.origin.find("Slurm") != std::string::npos);
  CHECK(calibrate::choose_launcher("", true, 8, slurm).words.empty());  // the simulator stays in-process
  CHECK(calibrate::choose_launcher("", false, 8, {}).words.empty());
  CHECK_THROWS_AS(calibrate::choose_launcher("  ", false, 8, {}), InputError);
  CHECK(calibrate::local_gpu_count({{"SLURM_GPUS_ON_NODE", "4"}}) == 4);
  // What salloc --gpus-per-node leaves its shell (tests/slurm: the shell of salloc -N 2 --gpus-per-node 2).
  CHECK(calibrate::local_gpu_count({{"SLURM_GPUS_PER_NODE", "2"}}) == 2);
  CHECK(calibrate::local_gpu_count({{"SLURM_GPUS_PER_NODE", "gpu:3"}}) == 3);
  CHECK(calibrate::local_gpu_count({{"SLURM_GPUS_PER_NODE", "a100:2,v100:1"}}) == 3);
  CHECK(calibrate::local_gpu_count({{"SLURM_GPUS_ON_NODE", "4"}, {"SLURM_GPUS_PER_NODE", "2"}}) == 4);
}

TEST_CASE("job files live in a folder next to the journal") {
  auto f = calibrate::job_files("/s/c.journal.jsonl", 3);
  CHECK(f.part == fs::path("/s/c.journal.parts/job3.jsonl"));
  CHECK(f.log == fs::path("/s/c.journal.parts/job3.log"));
}

TEST_CASE("tune --simulate through mpirun gives the profile the in-process path gives") {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    AUTOTUNE_SKIP("mpirun not found: orchestration through mpirun not tested");
  }
  const TempDir in_process_tmp("inproc");
  const fs::path in_process = in_process_tmp.path();
  const TempDir launched_tmp("mpirun");
  const fs::path launched = launched_tmp.path();
  REQUIRE(run(kBinary + kTune + "--store " + in_process.string(), in_process / "out") == 0);
  int rc = run("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 " + kBinary + kTune +
                   "--launcher 'mpirun --oversubscribe -np 2' --store " + launched.string(),
               launched / "out");
  INFO(slurp(launched / "out"));
  REQUIRE(rc == 0);
  auto reference = profiles::read_profile(only_file(in_process, ".toml"));
  auto profile = profiles::read_profile(only_file(launched, ".toml"));
  CHECK_FALSE(reference.rules.empty());
  check_same_rules(reference, profile);
  // Both jobs ran through mpirun and the merged journal holds both settings' measurements.
  std::string out = slurp(launched / "out");
  CHECK(out.find("'cross_nic=1': started: mpirun -x NCCL_CROSS_NIC --oversubscribe") != std::string::npos);
  auto merged = search::load_journal(only_file(launched, ".jsonl"));
  REQUIRE(merged.header);
  CHECK(merged.header->settings.size() == 2);
  auto in_process_journal = search::load_journal(only_file(in_process, ".jsonl"));
  REQUIRE(merged.records.size() == in_process_journal.records.size());
  // The very same measurements: each setting's worker ran the same requests in the same order.
  std::map<std::string, std::vector<double>> expected;
  auto key = [](const search::JournalRecord& r) {
    return r.setting.id + "|" + std::to_string(r.scale.ranks) + "|" +
           std::to_string(static_cast<int>(r.measurement.request.collective)) + "|" +
           std::to_string(r.measurement.request.bytes) + "|" +
           runners::to_string(r.measurement.request.candidate) + "|" +
           std::to_string(r.measurement.request.repetitions) + "|" + std::to_string(r.attempt);
  };
  for (const auto& r : in_process_journal.records) expected[key(r)] = r.measurement.times_us;
  for (const auto& r : merged.records) {
    INFO(key(r));
    REQUIRE(expected.count(key(r)) == 1);
    CHECK(expected[key(r)] == r.measurement.times_us);
  }
  fs::remove_all(in_process);
  fs::remove_all(launched);
}

TEST_CASE(
    "a budget through mpirun: a worker measuring another setting alone is not failed for lacking the "
    "defaults") {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    AUTOTUNE_SKIP("mpirun not found: orchestration through mpirun not tested");
  }
  const TempDir tmp("budget-mpirun");
  // The cross_nic=1 worker has no NCCL's-defaults records of its own; the orchestrator judges the merged
  // journal, where both settings are.
  const int rc =
      run("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 " + kBinary + kTune +
              "--budget 10m --launcher 'mpirun --oversubscribe -np 2' --store " + tmp.path().string(),
          tmp.path() / "out");
  const std::string out = slurp(tmp.path() / "out");
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(out.find("could be decided") == std::string::npos);
  CHECK(out.find("failed") == std::string::npos);
  CHECK_FALSE(profiles::read_profile(only_file(tmp.path(), ".toml")).rules.empty());
}

TEST_CASE("a failed job is reported with its output and the rest make the profile and resume reruns it") {
  const TempDir tmp("fail");
  const fs::path dir = tmp.path();
  const fs::path store = dir / "store";
  fs::path failing = fake_launcher(dir, true), working = fake_launcher(dir, false);
  REQUIRE(run(kBinary + kTune + "--format json --launcher " + failing.string() + " --store " + store.string(),
              dir / "out") == 0);
  std::string out = slurp(dir / "out");
  INFO(out);
  CHECK(starts(dir) == 2);
  auto profile = profiles::read_profile(only_file(store, ".toml"));
  CHECK_FALSE(profile.rules.empty());
  CHECK(profile.env.count("NCCL_CROSS_NIC") == 0);  // the failed setting cannot be chosen
  // The summary and the journal name the failed job with its output.
  CHECK(out.find("fabric says no: port 7 down") != std::string::npos);
  CHECK(out.find("exit status 3") != std::string::npos);
  auto journal = search::load_journal(only_file(store, ".jsonl"));
  bool recorded = false;
  for (const auto& e : journal.job_events)
    if (e.job == "cross_nic=1" && e.status == "failed" && e.detail.find("port 7 down") != std::string::npos)
      recorded = true;
  CHECK(recorded);
  for (const auto& r : journal.records) CHECK(r.setting.id == "default");

  // Failing again on --resume: the journal holds this run's output only, not the earlier run's too.
  REQUIRE(run(kBinary + kTune + "--resume --launcher " + failing.string() + " --store " + store.string(),
              dir / "out1") == 0);
  CHECK(starts(dir) == 3);
  for (const auto& e : search::load_journal(only_file(store, ".jsonl")).job_events)
    if (e.status == "failed") {
      size_t first = e.detail.find("port 7 down");
      CHECK(first != std::string::npos);
      CHECK(e.detail.find("port 7 down", first + 1) == std::string::npos);
    }

  // Resume: the finished job is not started again, the failed one is.
  REQUIRE(run(kBinary + kTune + "--resume --launcher " + working.string() + " --store " + store.string(),
              dir / "out2") == 0);
  INFO(slurp(dir / "out2"));
  CHECK(starts(dir) == 4);
  CHECK(slurp(dir / "out2").find("'default': already finished") != std::string::npos);
  auto resumed = search::load_journal(only_file(store, ".jsonl"));
  size_t cross = 0;
  for (const auto& r : resumed.records) cross += r.setting.id == "cross_nic=1";
  CHECK(cross > 0);
  CHECK(resumed.records.size() > journal.records.size());

  // A resumed run with every job finished starts nothing and derives the same profile.
  auto before = profiles::read_profile(only_file(store, ".toml"));
  REQUIRE(run(kBinary + kTune + "--resume --launcher " + working.string() + " --store " + store.string(),
              dir / "out3") == 0);
  CHECK(starts(dir) == 4);
  check_same_rules(before, profiles::read_profile(only_file(store, ".toml")));
  fs::remove_all(dir);
}

TEST_CASE("an interrupted job part resumes where it stopped") {
  const TempDir tmp("part");
  const fs::path dir = tmp.path();
  const fs::path store = dir / "store";
  fs::path working = fake_launcher(dir, false);
  REQUIRE(run(kBinary + kTune + "--launcher " + working.string() + " --store " + store.string(),
              dir / "out") == 0);
  auto reference = profiles::read_profile(only_file(store, ".toml"));
  fs::path journal = only_file(store, ".jsonl");
  auto part = calibrate::job_files(journal, 1).part;
  // Cut job 1's part mid-line after a third, as a kill would: its `finished` line is gone.
  std::string text = read_file(part);
  write_file_atomically(part, text.substr(0, text.size() / 3));
  size_t kept = search::load_journal(part).records.size();
  REQUIRE(kept > 0);
  REQUIRE(run(kBinary + kTune + "--resume --format json --launcher " + working.string() + " --store " +
                  store.string(),
              dir / "out2") == 0);
  std::string out = slurp(dir / "out2");
  INFO(out);
  CHECK(starts(dir) == 3);  // two jobs, then job 1 again
  check_same_rules(reference, profiles::read_profile(only_file(store, ".toml")));
  // Every record of the journal is measured now, replayed, or a one-node shape counted for cross_nic=1 too.
  const auto merged = search::load_journal(journal).records;
  const auto shared =
      std::count_if(merged.begin(), merged.end(), [](const auto& r) { return !r.measured_under.empty(); });
  CHECK(shared > 0);
  CHECK(out.find("\"shared\": " + std::to_string(shared)) != std::string::npos);
  CHECK(out.find("\"replayed\": " + std::to_string(merged.size() - static_cast<size_t>(shared) -
                                                   (search::load_journal(part).records.size() - kept))) !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("tune: launcher and worker options that cannot work are input errors") {
  const TempDir tmp("bad");
  const fs::path dir = tmp.path();
  CHECK(run(kBinary + kTune + "--launcher \"srun 'x\" --store " + dir.string(), dir / "o") == 2);
  CHECK(run(kBinary + kTune + "--worker --store " + dir.string(), dir / "o") == 2);
  CHECK(run(kBinary + kTune + "--worker --job-id 5 --journal-part " + (dir / "p.jsonl").string(),
            dir / "o") == 2);
  CHECK(run(kBinary + kTune + "--launcher /nonexistent/launcher --store " + (dir / "s").string(),
            dir / "o") == 1);
  CHECK(slurp(dir / "o").find("cannot start '/nonexistent/launcher'") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("tune on GPUs where there are none: the worker's reason is reported and the status is 1") {
  if (std::system("nvidia-smi -L >/dev/null 2>&1") == 0) {
    AUTOTUNE_SKIP("a GPU is present: the no-GPU path is not tested here (gpu_tune_check.sh measures it)");
  }
  const TempDir tmp("nogpu");
  const fs::path dir = tmp.path();
  // The health check comes first, and says why it cannot measure.
  const std::string tune = kBinary + " tune --collectives allreduce --min-bytes 1K --max-bytes 16M --store " +
                           (dir / "s").string();
  CHECK(run(tune, dir / "checked") == 1);
  const std::string checked = slurp(dir / "checked");
  CHECK(checked.find("the health check job (local: one worker process per job) left no result") !=
        std::string::npos);
  CHECK(checked.find("its probe found no GPU") != std::string::npos);
  // Past it, the workers say why.
  CHECK(run(tune + " --ignore-health", dir / "out") == 1);
  std::string out = slurp(dir / "out");
  INFO(out);
  CHECK(out.find("jobs run: local: one worker process per job") != std::string::npos);
  CHECK(out.find("no job measured anything; default: exit status 1") != std::string::npos);
  CHECK(out.find("no CUDA device") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("inside a Slurm allocation the jobs go through srun with one task per GPU on each node") {
  const TempDir tmp("slurm");
  const fs::path dir = tmp.path();
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  // A stand-in srun: records its arguments, drops its own four options and runs the worker.
  write_file_atomically(bin / "srun", "#!/bin/sh\necho \"$@\" >> '" + (dir / "srun-args").string() +
                                          "'\nshift 4\nexec \"$@\"\n");
  fs::permissions(bin / "srun", fs::perms::owner_all);
  const std::string tune =
      "PATH=" + bin.string() + ":$PATH SLURM_JOB_ID=42 SLURM_NNODES=2 SLURM_GPUS_ON_NODE=4 " + kBinary +
      " tune --collectives allreduce --min-bytes 1K --max-bytes 1M --cross-nic 1 --store " +
      (dir / "s").string();
  // The health check runs first, as a job through the same srun.
  run(tune, dir / "checked");
  CHECK(slurp(dir / "srun-args")
            .find("--ntasks-per-node 4 -N 2 " + kBinary + " check --format json --output ") !=
        std::string::npos);
  int rc = run(tune + " --ignore-health", dir / "out");
  std::string out = slurp(dir / "out");
  INFO(out);
  CHECK((rc == 0 || rc == 1));  // 1 where there is no GPU: the workers say so
  CHECK(out.find("jobs run: Slurm allocation 42 detected srun --ntasks-per-node 4 -N 2") !=
        std::string::npos);
  std::string args = slurp(dir / "srun-args");
  CHECK(args.find("--ntasks-per-node 4 -N 2 " + kBinary + " tune --worker --job-id 0") != std::string::npos);
  CHECK(args.find("--ntasks-per-node 4 -N 2 " + kBinary + " tune --worker --job-id 1") != std::string::npos);
  // The cluster is named from the allocation's node count.
  CHECK(fs::exists(dir / "s"));
  bool named = false;
  for (const auto& e : fs::directory_iterator(dir / "s"))
    named = named || e.path().filename().string().find("-2n-") != std::string::npos;
  CHECK(named);
  fs::remove_all(dir);
}

TEST_CASE("SIGTERM to the orchestrator reaches the running job and ends the calibration with status 1") {
  const TempDir tmp("sigterm");
  const fs::path dir = tmp.path();
  const fs::path store = dir / "store";
  fs::path script = dir / "slow-launcher.sh", pidfile = dir / "job.pid";
  write_file_atomically(script, "#!/bin/sh\necho $$ > '" + pidfile.string() + "'\nexec sleep 60\n");
  fs::permissions(script, fs::perms::owner_all);
  fs::path out = dir / "out";
  std::fflush(nullptr);  // the child must not repeat what this process buffered
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen(out.c_str(), "w", stdout);
    std::freopen(out.c_str(), "a", stderr);
    ::execl(kBinary.c_str(), kBinary.c_str(), "tune", "--simulate", "--example", "h100-8x-2nic", "--nodes",
            "2", "--cross-nic", "1", "--launcher", script.c_str(), "--store", store.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 2000 && !(fs::exists(pidfile) && fs::file_size(pidfile) > 0); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(fs::exists(pidfile));
  pid_t job = std::stoi(read_file(pidfile));
  ::kill(child, SIGTERM);
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 1000 && !ended; ++i) {
    ended = ::waitpid(child, &status, WNOHANG) == child;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!ended) {
    ::kill(child, SIGKILL);
    ::kill(job, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  REQUIRE(ended);
  INFO(read_file(out));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK((::kill(job, 0) != 0 && errno == ESRCH));  // the job is gone, not left behind
  CHECK(read_file(out).find("interrupted by") != std::string::npos);
  CHECK(read_file(out).find("'cross_nic=1': started") == std::string::npos);  // no job started after it
  fs::remove_all(dir);
}

TEST_CASE("with a budget a job that hangs is stopped and recorded as failed") {
  const TempDir tmp("hang");
  const fs::path dir = tmp.path();
  calibrate::OrchestratorOptions o;
  // A launcher that never starts the worker: `sh -c 'sleep 30'` ignores the words after it.
  o.launcher = {{"sh", "-c", "echo hung; exec sleep 30"}, "--launcher"};
  o.exe = kBinary;
  o.settings = {{"default", {}}, {"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}}};
  o.journal = dir / "c.journal.jsonl";
  // Job 0 is NCCL's defaults: its share is the whole budget, 1.2 s; stopped at 2 x 1.2 + 0.2 s, after which
  // nothing is left for job 1.
  o.budget = std::chrono::duration<double>(1.2);
  o.job_grace = std::chrono::duration<double>(0.2);
  o.header.strategy = "exhaustive";
  o.header.source = "simulated";
  std::vector<std::string> notices;
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(
      calibrate::orchestrate(o, [&](const calibrate::JobNotice& n) { notices.push_back(n.what); }),
      Catch::Contains("no job measured anything") && Catch::Contains("stopped after 2 s") &&
          Catch::Contains("hung") && Catch::Contains("not run: the time budget was spent"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  auto journal = search::load_journal(o.journal);
  size_t failed = 0;
  for (const auto& e : journal.job_events) failed += e.status == "failed";
  CHECK(failed == 2);
  fs::remove_all(dir);
}

// The same orchestrator on the process-launcher and clock seams: what it starts, and how it stops jobs, in no
// real time.
namespace {

calibrate::OrchestratorOptions two_jobs(const fs::path& dir, autotune::ProcessLauncher& launcher,
                                        const autotune::Clock& clock) {
  calibrate::OrchestratorOptions o;
  o.launcher = {{"mpirun", "-np", "2"}, "--launcher"};
  o.exe = "/opt/bin/nccl-autotune";
  o.measure_args = {"--simulate", "--nodes", "2"};
  o.settings = {{"default", {}}, {"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}}};
  o.journal = dir / "c.journal.jsonl";
  o.header.strategy = "exhaustive";
  o.header.source = "simulated";
  o.processes = &launcher;
  o.clock = &clock;
  return o;
}

}  // namespace

TEST_CASE("orchestrator seam: each job's exact command, environment and output file") {
  const TempDir tmp("seam-commands");
  const fs::path dir = tmp.path();
  autotune::test::ManualClock clock;
  autotune::test::FakeProcessLauncher launcher(
      clock, {{0.5, {0, {}}, false, "", {}, 0}, {0.5, {3, {}}, false, "boom\n", {}, 0}});
  auto o = two_jobs(dir, launcher, clock);
  CHECK_THROWS_WITH(calibrate::orchestrate(o),
                    Catch::Contains("no job measured anything") &&
                        Catch::Contains("cross_nic=1: exit status 3, output:\nboom"));
  REQUIRE(launcher.started().size() == 2);
  const auto& job1 = launcher.started()[1].spec;
  CHECK(job1.argv == Words{"mpirun", "-x", "NCCL_CROSS_NIC", "-np", "2", "/opt/bin/nccl-autotune", "tune",
                           "--worker", "--job-id", "1", "--journal-part",
                           calibrate::job_files(o.journal, 1).part.string(), "--simulate", "--nodes", "2"});
  CHECK(job1.env.at("NCCL_CROSS_NIC") == "1");
  CHECK(launcher.started()[0].spec.env.count("NCCL_CROSS_NIC") == 0);
  CHECK(job1.output == calibrate::job_files(o.journal, 1).log);
  fs::remove_all(dir);
}

TEST_CASE("orchestrator seam: a job past its limit gets SIGTERM, then SIGKILL 10 s later if it ignores it") {
  const TempDir tmp("seam-limit");
  const fs::path dir = tmp.path();
  autotune::test::ManualClock clock;
  // Runs for an hour and ignores SIGTERM.
  autotune::test::FakeProcessLauncher launcher(clock, {{3600, {0, {}}, true, "", {}, 0}});
  auto o = two_jobs(dir, launcher, clock);
  // Job 0 is NCCL's defaults: its share is all of the budget, 200 s; its limit 2 x 200 + 120.
  o.budget = std::chrono::duration<double>(200.0);
  const auto start = clock.now();
  CHECK_THROWS_WITH(calibrate::orchestrate(o), Catch::Contains("stopped after 520 s") &&
                                                   Catch::Contains("killed by signal Killed") &&
                                                   Catch::Contains("not run: the time budget was spent"));
  REQUIRE(launcher.started().size() == 1);  // nothing was left for job 1
  const auto& signals = launcher.started()[0].signals;
  REQUIRE(signals.size() == 2);
  CHECK(signals[0].first == SIGTERM);
  CHECK(signals[0].second == Approx(520.0).margin(0.05));
  CHECK(signals[1].first == SIGKILL);
  CHECK(signals[1].second == Approx(530.0).margin(0.05));
  CHECK(clock.seconds_since(start) < 531.0);
  fs::remove_all(dir);
}

TEST_CASE("orchestrator seam: a stop signal during a job starts no further job and keeps the parts") {
  const TempDir tmp("seam-stop");
  const fs::path dir = tmp.path();
  autotune::test::ManualClock clock;
  autotune::test::FakeProcessLauncher launcher(clock, {{5, {std::nullopt, SIGTERM}, false, "", {}, SIGTERM}});
  auto o = two_jobs(dir, launcher, clock);
  CHECK_THROWS_WITH(calibrate::orchestrate(o),
                    Catch::Contains("interrupted by Terminated") && Catch::Contains("--resume continues"));
  CHECK(launcher.started().size() == 1);
  // The merged journal exists and records no failure for the interrupted job: --resume reruns it.
  auto journal = search::load_journal(o.journal);
  for (const auto& e : journal.job_events) CHECK(e.status != "failed");
  fs::remove_all(dir);
}

TEST_CASE(
    "orchestrator seam: NCCL's defaults run first and may use the whole budget, the rest share what is "
    "left") {
  const TempDir tmp("seam-budget-default");
  const fs::path dir = tmp.path();
  autotune::test::ManualClock clock;
  // Four jobs, 2 s: the default job uses 1.5 s of it; the three others share the 0.5 s left, under a second
  // each, and are not started (the old even split skipped the default job and gave the last all of it).
  autotune::test::FakeProcessLauncher launcher(clock, {{1.5, {0, {}}, false, "", {}, 0}});
  auto o = two_jobs(dir, launcher, clock);
  o.settings = {{"default", {}},
                {"ib_hca=mlx5_0", {{"NCCL_IB_HCA", "mlx5_0"}}},
                {"cross_nic=0", {{"NCCL_CROSS_NIC", "0"}}},
                {"cross_nic=1", {{"NCCL_CROSS_NIC", "1"}}}};
  o.budget = std::chrono::duration<double>(2.0);
  std::vector<std::string> notices;
  CHECK_THROWS_WITH(
      calibrate::orchestrate(
          o, [&](const calibrate::JobNotice& n) { notices.push_back(n.setting + ": " + n.what); }),
      Catch::Contains("no job measured anything"));
  REQUIRE(launcher.started().size() == 1);
  const auto& argv = launcher.started()[0].spec.argv;
  CHECK(std::find(argv.begin(), argv.end(), "--job-id") + 1 < argv.end());
  CHECK(*(std::find(argv.begin(), argv.end(), "--job-id") + 1) == "0");
  CHECK(*(std::find(argv.begin(), argv.end(), "--budget") + 1) == "2s");
  CHECK(std::count_if(notices.begin(), notices.end(), [](const std::string& n) {
          return n.find("not run: the time budget was spent") != std::string::npos;
        }) == 3);
  fs::remove_all(dir);
}

TEST_CASE("orchestrator: a new calibration keeps the previous journal and parts aside and says so") {
  const TempDir tmp("keep-journal");
  const fs::path dir = tmp.path();
  autotune::test::ManualClock clock;
  autotune::test::FakeProcessLauncher launcher(clock, {});
  auto o = two_jobs(dir, launcher, clock);
  // What an earlier calibration left: its merged journal and a part.
  autotune::write_file_atomically(o.journal,
                                  "{\"type\":\"header\",\"format\":\"nccl-autotune-journal\","
                                  "\"version\":1,\"source\":\"simulated\",\"created\":"
                                  "\"2026-11-30T04:37:15Z\"}\n");
  fs::create_directories(calibrate::job_files(o.journal, 0).part.parent_path());
  autotune::write_file_atomically(calibrate::job_files(o.journal, 0).part, "earlier part\n");
  std::vector<std::string> said;
  o.say = [&](const std::string& line) { said.push_back(line); };
  CHECK_THROWS(calibrate::orchestrate(o));
  const fs::path kept = dir / "c.journal.20261130T043715Z.jsonl";
  CHECK(fs::exists(kept));
  CHECK(autotune::read_file(dir / "c.journal.20261130T043715Z.parts" / "job0.jsonl") == "earlier part\n");
  REQUIRE(said.size() == 1);
  CHECK_THAT(said[0], Catch::Contains(kept.string()));
  fs::remove_all(dir);
}

TEST_CASE(
    "concurrent scales: 256 simulated nodes, disjoint nodes per round, the sequential calibration's rules") {
  const TempDir tmp("concurrent");
  const fs::path side = tmp.path() / "side", turn = tmp.path() / "turn";
  fs::create_directories(side);
  fs::create_directories(turn);
  const std::string tune =
      kBinary +
      " tune --simulate --example h100-8x --nodes 256 --collectives allreduce --max-bytes 64K "
      "--ignore-health --launcher env --store ";
  REQUIRE(run(tune + side.string() + " --report " + (tmp.path() / "report.html").string(), side / "out") ==
          0);
  REQUIRE(run(tune + turn.string() + " --concurrent off", turn / "out") == 0);
  const std::string out = slurp(side / "out");
  INFO(out);
  CHECK(out.find("round 1/") != std::string::npos);
  check_same_rules(profiles::read_profile(only_file(turn, ".toml")),
                   profiles::read_profile(only_file(side, ".toml")));
  // Each group part measures one scale on one node range (after the records of earlier rounds it was seeded
  // with, for the predicted scales' fit); a round's ranges are disjoint.
  std::map<std::string, std::vector<std::pair<int, int>>> rounds;  // "job0.round1" -> ranges
  std::map<std::string, std::string> range_of_scale;               // "default 64x8" -> "64-127"
  for (const auto& e : fs::directory_iterator(search::journal_parts_dir(only_file(side, ".jsonl")))) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".jsonl" || name.find(".group") == std::string::npos) continue;
    const auto part = search::load_journal(e.path());
    REQUIRE_FALSE(part.records.empty());
    // The group's own measurements come last, with its predictions (which ran on no nodes) if any.
    const auto& own = *std::find_if(part.records.rbegin(), part.records.rend(),
                                    [](const search::JournalRecord& r) { return r.source != "predicted"; });
    const bool seeded = part.records.front().scale != own.scale;
    for (const auto& r : part.records)
      CHECK((r.scale == own.scale) == (r.nodes_used == own.nodes_used || r.source == "predicted"));
    const size_t dash = own.nodes_used.find('-');
    const int first = std::stoi(own.nodes_used),
              last = dash == std::string::npos ? first : std::stoi(own.nodes_used.substr(dash + 1));
    CHECK(last - first + 1 == own.scale.nodes);
    CHECK(last < 256);
    CHECK(seeded == (name.find(".round1.") == std::string::npos));
    rounds[name.substr(0, name.find(".group"))].push_back({first, last});
    range_of_scale[own.setting.id + " " + runners::shape_text(own.scale)] = own.nodes_used;
  }
  REQUIRE(rounds.size() >= 4);  // every job has a round of groups side by side
  for (auto& [round, ranges] : rounds) {
    INFO(round);
    CHECK(ranges.size() >= 2);
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i) CHECK(ranges[i - 1].second < ranges[i].first);
  }
  // The merged journal keeps each measurement's nodes; the sequential one has none, and both hold the same
  // number of measurements (the job's own worker replayed the groups' instead of measuring them again).
  const auto merged = search::load_journal(only_file(side, ".jsonl"));
  const auto sequential = search::load_journal(only_file(turn, ".jsonl"));
  CHECK(merged.records.size() == sequential.records.size());
  size_t tagged = 0;
  for (const auto& r : merged.records) {
    if (r.nodes_used.empty()) continue;
    ++tagged;
    // A one-node copy counted for another setting says where the first job measured it.
    const std::string& job = r.measured_under.empty() ? r.setting.id : r.measured_under;
    CHECK(range_of_scale[job + " " + runners::shape_text(r.scale)] == r.nodes_used);
  }
  CHECK(tagged > merged.records.size() / 2);
  for (const auto& r : sequential.records) CHECK(r.nodes_used.empty());
  // A group's progress counts its own scale's planned measurements, not the whole plan's.
  const fs::path parts = search::journal_parts_dir(only_file(side, ".jsonl"));
  auto planned = [](const std::string& log) {
    const size_t at = log.find("\"planned\":");
    return at == std::string::npos ? -1L : std::stol(log.substr(at + 10));
  };
  const long group_planned = planned(slurp(parts / "job0.round1.group1.log"));
  const long job_planned = planned(slurp(parts / "job0.log"));
  CHECK(group_planned > 0);
  CHECK(group_planned < job_planned);
  // The report says it beside the figures of a shape that shared the fabric.
  const std::string report = slurp(tmp.path() / "report.html");
  CHECK_THAT(report, Catch::Contains("Measured side by side with other communicators, on node(s) " +
                                     range_of_scale["default 64x8"] + " of the allocation"));
}
