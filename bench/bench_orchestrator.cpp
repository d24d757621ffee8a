// What orchestration costs a calibration: `tune --simulate` with two process-wide settings in-process (the
// baseline) against the same calibration with each setting a worker process started through a launcher
// (`env`, which only execs its arguments), including the journal parts' merge. On GPUs a job measures for
// minutes, so the target is an overhead under 100 ms per job.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path g_cli, g_dir;
std::map<std::string, std::vector<double>> g_ms;
constexpr int kJobs = 2;

int spawn(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& s : argv) args.push_back(s.data());
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> tune_args(const std::string& store) {
  return {g_cli.string(), "tune",        "--simulate",  "--example",   "h100-8x-2nic",
          "--nodes",      "2",           "--cross-nic", "1",           "--collectives",
          "allreduce",    "--min-bytes", "1K",          "--max-bytes", "64M",
          "--strategy",   "exhaustive",  "--store",     store};
}

void timed(benchmark::State& state, const std::string& name, std::vector<std::string> extra) {
  for (auto _ : state) {
    auto argv = tune_args((g_dir / name).string());
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto t0 = std::chrono::steady_clock::now();
    int rc = spawn(argv);
    auto t1 = std::chrono::steady_clock::now();
    if (rc != 0) state.SkipWithError(("exit status " + std::to_string(rc)).c_str());
    g_ms[name].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
}

void BM_tune_in_process(benchmark::State& s) {
  timed(s, "in_process", {});
}
void BM_tune_orchestrated(benchmark::State& s) {
  timed(s, "orchestrated", {"--launcher", "/usr/bin/env"});
}
BENCHMARK(BM_tune_in_process)->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_tune_orchestrated)->Unit(benchmark::kMillisecond)->Iterations(10);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  g_cli = fs::canonical("/proc/self/exe").parent_path().parent_path() / "cli" / "nccl-autotune";
  char tmpl[] = "/tmp/bench-orchestrator-XXXXXX";
  g_dir = ::mkdtemp(tmpl);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  double base = median(g_ms["in_process"]), orch = median(g_ms["orchestrated"]);
  std::printf(
      "\ntune --simulate, %d jobs (median of %zu runs): in-process %.1f ms (baseline), orchestrated %.1f ms: "
      "ratio %.2fx, overhead %.1f ms per job (target: under 100 ms per job)\n",
      kJobs, g_ms["orchestrated"].size(), base, orch, base > 0 ? orch / base : 0.0, (orch - base) / kJobs);
  fs::remove_all(g_dir);
  return 0;
}
