// The launcher's cost to a job: `nccl-autotune run -- /bin/true` against exec'ing /bin/true directly, in one
// run: with the profile named (`--profile P`: read, validate, export, exec; target under 3 ms of overhead,
// which needs the binary to map nothing heavy: libnccl, libcudart and libmpi live in modules `run` never
// loads), and found through the store by this node's fingerprint with the per-boot cache warm (every rank
// after the first; target under 20 ms) and cold (the first rank after a boot: a live probe).
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "profiles/profile_toml.hpp"

namespace fs = std::filesystem;

namespace {

struct World {
  fs::path dir, cli, store, cache;
  std::vector<std::string> env_strings;
};
World g_world;
std::map<std::string, std::vector<double>> g_ms;  // per benchmark, every run's wall time

// fork + execve + wait, stdout and stderr to /dev/null; returns the exit status.
int spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args, envp;
  std::vector<std::string> a = argv;
  for (auto& s : a) args.push_back(s.data());
  args.push_back(nullptr);
  for (auto& s : g_world.env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string capture(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

void setup() {
  char tmpl[] = "/tmp/bench-launcher-XXXXXX";
  g_world.dir = ::mkdtemp(tmpl);
  g_world.cli = fs::canonical("/proc/self/exe").parent_path().parent_path() / "cli" / "nccl-autotune";
  g_world.store = g_world.dir / "store";
  g_world.cache = g_world.dir / "cache";
  fs::create_directories(g_world.store);
  fs::create_directories(g_world.dir / "plugin");
  std::ofstream(g_world.dir / "plugin" / "libnccl-tuner-autotune.so");
  g_world.env_strings = {"PATH=/usr/bin:/bin", "NCCL_AUTOTUNE_STORE=" + g_world.store.string(),
                         "NCCL_AUTOTUNE_CACHE_DIR=" + g_world.cache.string(),
                         "NCCL_AUTOTUNE_PLUGIN_DIR=" + (g_world.dir / "plugin").string()};
  // This node's fingerprint as the launcher computes it, so that the store holds a matching profile and
  // the measured path is the real one (store lookup by fingerprint, env export, exec).
  std::string env_prefix;
  for (const auto& kv : g_world.env_strings) env_prefix += "'" + kv + "' ";
  std::string json =
      capture("env -i " + env_prefix + "'" + g_world.cli.string() + "' env --format json 2>/dev/null");
  const std::string key = "\"fingerprint\": \"";
  auto at = json.find(key);
  if (at == std::string::npos) {
    std::fprintf(stderr, "cannot get this node's fingerprint from `nccl-autotune env --format json`:\n%s\n",
                 json.c_str());
    std::exit(1);
  }
  std::string fp = json.substr(at + key.size(), 16);
  autotune::profiles::Profile p;
  p.cluster.name = "bench";
  p.cluster.fingerprint = fp;
  p.provenance.created = "2026-11-30T00:00:00Z";
  p.provenance.nccl_version = "2.28.9";
  p.env = {{"NCCL_CROSS_NIC", "1"}};
  autotune::profiles::write_profile(g_world.store / "bench-nccl2.28.toml", p);
}

void timed(benchmark::State& state, const std::string& name, const std::vector<std::string>& argv,
           bool cold) {
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      fs::remove(g_world.cache / "fingerprint");
      state.ResumeTiming();
    }
    auto t0 = std::chrono::steady_clock::now();
    int rc = spawn(argv);
    auto t1 = std::chrono::steady_clock::now();
    if (rc != 0) state.SkipWithError(("exit status " + std::to_string(rc)).c_str());
    g_ms[name].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
}

void BM_exec_true_directly(benchmark::State& s) {
  timed(s, "direct", {"/bin/true"}, false);
}
void BM_run_true_with_profile(benchmark::State& s) {
  timed(s, "profile",
        {g_world.cli.string(), "run", "--strict", "--profile",
         (g_world.store / "bench-nccl2.28.toml").string(), "--", "/bin/true"},
        false);
}
void BM_run_true_cache_warm(benchmark::State& s) {
  timed(s, "warm", {g_world.cli.string(), "run", "--strict", "--", "/bin/true"}, false);
}
void BM_run_true_cache_cold(benchmark::State& s) {
  timed(s, "cold", {g_world.cli.string(), "run", "--strict", "--", "/bin/true"}, true);
}
BENCHMARK(BM_exec_true_directly)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_run_true_with_profile)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_run_true_cache_warm)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_run_true_cache_cold)->Unit(benchmark::kMillisecond)->MinTime(1.0);

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  setup();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const double direct = median(g_ms["direct"]), named = median(g_ms["profile"]), warm = median(g_ms["warm"]),
               cold = median(g_ms["cold"]);
  std::printf("\nmedian wall time per launch: exec /bin/true directly %.2f ms (baseline)\n", direct);
  if (!g_ms["profile"].empty())
    std::printf(
        "  nccl-autotune run --profile P: %.2f ms = %.1fx baseline, overhead %.2f ms (target: < 3 ms) %s\n",
        named, named / direct, named - direct, named - direct < 3.0 ? "MET" : "MISSED");
  if (!g_ms["warm"].empty())
    std::printf(
        "  nccl-autotune run, cache warm: %.2f ms = %.1fx baseline, overhead %.2f ms (target: < 20 ms) %s\n",
        warm, warm / direct, warm - direct, warm - direct < 20.0 ? "MET" : "MISSED");
  if (!g_ms["cold"].empty())
    std::printf(
        "  nccl-autotune run, cache cold: %.2f ms = %.1fx baseline, overhead %.2f ms (a live probe; once per "
        "boot)\n",
        cold, cold / direct, cold - direct);
  std::error_code ec;
  fs::remove_all(g_world.dir, ec);
  return 0;
}
