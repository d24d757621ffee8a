// The plugin's hot path and its init, loaded as NCCL loads it (dlopen of the built library):
// - getCollInfo per call with profiles of 10, 1,000 and 10,000 AllReduce rules, beside a linear scan of the
//   same rules doing the same table edit (the baseline, measured in the same run);
// - init per communicator at 10,000 rules: the first of a process (a profile it has not read: read, parse,
//   compile) and a later one (the process holds the file and its rules compiled for that shape), beside
//   toml++ parsing the same file's text alone (the floor under the first from TOML, timed alternately with
//   it, outside the benchmark's own timing);
// - first init with the compiled rules (<profile>.rules, profiles/compiled_rules.hpp) beside the same text,
//   against a first init from the TOML alone (the baseline, same run);
// - cold start in a fresh process: a new process per sample (fork + exec of cold_init_child) opens
//   the plugin and times its first init at 10,000 rules, with the compiled rules, from the TOML alone and
//   from the same rules as NCCL's example-plugin CSV; beside it, when AUTOTUNE_BENCH_EXAMPLE_PLUGIN names a
//   build of NCCL's example tuner plugin, that plugin on the same CSV (samples interleaved, same machine
//   load); otherwise the figure measured for it on the build machine (3.0-4.1 ms).
// Targets (issue 27): < 30 ns per call and >= 10x faster than the scan at 1,000 rules, < 40 ns at 10,000; a
// later init <= 20 us at 10,000 rules; a first init < 5 ms at 10,000 (with the compiled rules the store
// writes); the fresh-process first init with compiled rules under 2.5 ms and no slower than NCCL's example
// plugin on the same rules.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <time.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include "common/input_file.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/nccl_csv.hpp"
#include "tests/plugins/nccl_harness.hpp"
#include "tests/plugins/plugin_fixtures.hpp"

using namespace autotune::plugin::test;
using autotune::test::TempDir;
using namespace autotune::nccl;

namespace {

constexpr uint64_t kRangeBytes = 4096;
std::map<std::string, double> g_ns;  // last (longest) run of each benchmark, CPU ns per operation

// This thread's CPU time: on a shared build machine wall-clock time mostly measures the other processes.
struct CpuClock {
  using duration = std::chrono::nanoseconds;
  static duration now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return duration(ts.tv_sec * 1000000000LL + ts.tv_nsec);
  }
};

struct ScanRule {
  int collective;
  uint64_t min_bytes, max_bytes;
  int algorithm, protocol, channels;
};

autotune::profiles::Profile make_profile(int n) {
  auto p = base_profile();
  for (int i = 0; i < n; ++i)
    p.rules.push_back(rule(Collective::allreduce, uint64_t(i) * kRangeBytes,
                           uint64_t(i) * kRangeBytes + kRangeBytes - 1,
                           i % 2 ? Algorithm::ring : Algorithm::tree, static_cast<Protocol>(i % 3), i % 4));
  return p;
}

struct Fixture {
  TempDir dir;
  std::vector<std::filesystem::path> paths;
  std::vector<std::vector<ScanRule>> scan;
  std::filesystem::path compiled;  // the 10,000-rule text again, with its .rules beside it
  std::filesystem::path csv;       // the same 10,000 rules as NCCL's example-plugin CSV
  std::filesystem::path online;    // the 1,000 rules again, each with a close runner-up, under [online]
  Fixture() {
    for (int n : {10, 1000, 10000}) {
      auto p = make_profile(n);
      paths.push_back(dir / ("rules" + std::to_string(n) + ".toml"));
      write_text(paths.back(), profile_text(p));
      std::vector<ScanRule> s;
      for (const auto& r : p.rules)
        s.push_back({static_cast<int>(r.collective), r.min_bytes, r.max_bytes, static_cast<int>(r.algorithm),
                     static_cast<int>(r.protocol), r.channels});
      scan.push_back(std::move(s));
    }
    compiled = dir / "rules10000-compiled.toml";
    const std::string text = profile_text(make_profile(10000));
    write_text(compiled, text);
    autotune::profiles::write_compiled_rules(
        compiled, autotune::profiles::parse_profile(text, compiled.string()), text);
    auto explored = make_profile(1000);
    for (auto& r : explored.rules) {
      r.busbw_gbps = 100.0;
      r.runner_up = autotune::profiles::Rule::RunnerUp{Algorithm::ring, Protocol::ll, 0, 99.0};
    }
    explored.online = autotune::profiles::OnlineSettings{true, 0.05};
    online = dir / "rules1000-online.toml";
    write_text(online, profile_text(explored));
    csv = dir / "rules10000.csv";
    write_text(csv, autotune::profiles::format_nccl_csv(make_profile(10000).rules));
  }
  static Fixture& get() {
    static Fixture f;
    return f;
  }
};

int index_of(int rules) {
  return rules == 10 ? 0 : rules == 1000 ? 1 : 2;
}

// Sizes uniformly over the covered range, so a scan walks half the rules on average; pre-generated so the
// loop measures the lookup, not the random number generator.
std::vector<size_t> sizes_for(int rules) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint64_t> d(0, uint64_t(rules) * kRangeBytes - 1);
  std::vector<size_t> out(4096);
  for (auto& s : out) s = d(rng);
  return out;
}

void record(benchmark::State& state, const std::string& name, CpuClock::duration elapsed,
            double per_iteration_ops = 1.0) {
  double ns = std::chrono::duration<double, std::nano>(elapsed).count() /
              (double(state.iterations()) * per_iteration_ops);
  g_ns[name] = ns;
}

// range(1) == 1: the 1,000 rules under [online] (exploring 5% of calls; the profiler half not loaded).
void BM_getCollInfo(benchmark::State& state) {
  const int rules = static_cast<int>(state.range(0));
  const bool online = state.range(1) == 1;
  ScopedEnv env("NCCL_AUTOTUNE_PROFILE",
                (online ? Fixture::get().online : Fixture::get().paths[index_of(rules)]).string());
  Comm comm(5, 16, 2, nullptr, nullptr);
  const auto sizes = sizes_for(rules);
  const CostTable fresh = nccl_like_table(4);
  CostTable table = fresh;
  int channels = 0;
  size_t i = 0;
  auto start = CpuClock::now();
  for (auto _ : state) {
    table = fresh;  // NCCL hands over a freshly computed table every call
    comm.coll_info(4, sizes[i++ & 4095], table, channels);
    benchmark::DoNotOptimize(table);
  }
  record(state, (online ? "online/" : "plugin/") + std::to_string(rules), CpuClock::now() - start);
}

void BM_linear_scan(benchmark::State& state) {
  const int rules = static_cast<int>(state.range(0));
  const auto& scan = Fixture::get().scan[index_of(rules)];
  const auto sizes = sizes_for(rules);
  const CostTable fresh = nccl_like_table(4);
  CostTable table = fresh;
  int channels = 0;
  size_t i = 0;
  auto start = CpuClock::now();
  for (auto _ : state) {
    table = fresh;
    const size_t bytes = sizes[i++ & 4095];
    float(*t)[NCCL_NUM_PROTOCOLS] = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(table.as_nccl());
    for (const ScanRule& r : scan) {
      if (r.collective == 4 && bytes >= r.min_bytes && bytes <= r.max_bytes) {
        if (t[r.algorithm][r.protocol] >= 0.0f) {
          t[r.algorithm][r.protocol] = 0.0f;
          if (r.channels > 0) channels = r.channels;
        }
        break;
      }
    }
    benchmark::DoNotOptimize(table);
    benchmark::DoNotOptimize(channels);
  }
  record(state, "scan/" + std::to_string(rules), CpuClock::now() - start);
}

// The process keeps the profile it read first however the file changes (one decision per job), so a first
// init is timed on the same content under a name the process has not seen: hard links, with the compiled
// rules beside the TOML linked under the matching name.
std::filesystem::path fresh_name(const std::filesystem::path& path, long long tick) {
  auto fresh = path.parent_path() / ("fresh" + std::to_string(tick) + "-" + path.filename().string());
  std::filesystem::create_hard_link(path, fresh);
  const auto rules = autotune::profiles::compiled_rules_path(path);
  if (std::filesystem::exists(rules))
    std::filesystem::create_hard_link(rules, autotune::profiles::compiled_rules_path(fresh));
  return fresh;
}

// range(1): 0 a later init (the process already read the file and compiled its rules for this shape),
// 1 a first init from the TOML, 2 a first init with compiled rules.
void BM_init(benchmark::State& state) {
  const int rules = static_cast<int>(state.range(0));
  const bool cold = state.range(1) != 0, compiled = state.range(1) == 2;
  const auto& path = compiled ? Fixture::get().compiled : Fixture::get().paths[index_of(rules)];
  static long long tick = 0;
  std::optional<ScopedEnv> env;
  env.emplace("NCCL_AUTOTUNE_PROFILE", path.string());
  { Comm warm_up(5, 16, 2, nullptr, nullptr); }
  const std::string text = autotune::read_file(path);
  CpuClock::duration total{}, parse_total{};
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      env.reset();
      env.emplace("NCCL_AUTOTUNE_PROFILE", fresh_name(path, ++tick).string());
      if (!compiled) {
        // The floor under a cold init, timed under the same machine load: toml++ parsing the text alone.
        auto parse_start = CpuClock::now();
        {
          toml::table root = toml::parse(text, std::string_view("profile.toml"));
          benchmark::DoNotOptimize(root.size());
        }
        parse_total += CpuClock::now() - parse_start;
      }
      state.ResumeTiming();
    }
    auto start = CpuClock::now();
    Comm comm(5, 16, 2, nullptr, nullptr);
    total += CpuClock::now() - start;
    benchmark::DoNotOptimize(comm.ctx());
  }
  record(state,
         std::string(compiled ? "init_cold_compiled/"
                     : cold   ? "init_cold/"
                              : "init_warm/") +
             std::to_string(rules),
         total);
  if (cold && !compiled) record(state, "toml_parse/" + std::to_string(rules), parse_total);
}

// --- Cold start in a fresh process ---------------------------------------------------------------------

struct ColdSample {
  double open_ms, wall_ms, cpu_ms;
};

// One fresh process: cold_init_child opens `plugin` and times its first init; `var` names the profile.
std::optional<ColdSample> cold_sample(const std::string& plugin, const char* var,
                                      const std::string& profile) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "NCCL_AUTOTUNE_PROFILE=", 22) != 0 &&
        std::strncmp(*e, "NCCL_TUNER_CONFIG_FILE=", 23) != 0)
      env.push_back(*e);
  env.push_back(std::string(var) + "=" + profile);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string child = AUTOTUNE_COLD_CHILD, code = "23206";
  char* argv[] = {child.data(), const_cast<char*>(plugin.c_str()), code.data(), nullptr};
  int out[2];
  if (pipe(out) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execve(child.c_str(), argv, envp.data());
    _exit(127);
  }
  close(out[1]);
  char buf[128] = {};
  const ssize_t n = read(out[0], buf, sizeof buf - 1);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  long long open_ns = 0, wall_ns = 0, cpu_ns = 0;
  if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      std::sscanf(buf, "%lld %lld %lld", &open_ns, &wall_ns, &cpu_ns) != 3)
    return std::nullopt;
  return ColdSample{open_ns / 1e6, wall_ns / 1e6, cpu_ns / 1e6};
}

struct ColdCase {
  const char* label;
  std::string plugin;
  const char* var;
  std::string profile;
  std::vector<ColdSample> samples;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::string spread(const std::vector<ColdSample>& s, double ColdSample::*field) {
  std::vector<double> v;
  for (const auto& x : s) v.push_back(x.*field);
  std::sort(v.begin(), v.end());
  char buf[96];
  if (v.empty()) return "no samples";
  std::snprintf(buf, sizeof buf, "%.2f ms (min %.2f, p90 %.2f)", v[v.size() / 2], v.front(),
                v[std::min(v.size() - 1, v.size() * 9 / 10)]);
  return buf;
}

// Returns whether the targets were met; prints the figures.
bool cold_start_report(int samples) {
  const Fixture& f = Fixture::get();
  std::vector<ColdCase> cases = {
      {"autotune, compiled rules (.rules beside the TOML)",
       AUTOTUNE_PLUGIN_PATH,
       "NCCL_AUTOTUNE_PROFILE",
       f.compiled.string(),
       {}},
      {"autotune, TOML alone", AUTOTUNE_PLUGIN_PATH, "NCCL_AUTOTUNE_PROFILE", f.paths[2].string(), {}},
      {"autotune, the same rules as NCCL's example CSV",
       AUTOTUNE_PLUGIN_PATH,
       "NCCL_TUNER_CONFIG_FILE",
       f.csv.string(),
       {}},
  };
  const char* example = std::getenv("AUTOTUNE_BENCH_EXAMPLE_PLUGIN");
  if (example && *example)
    cases.push_back(
        {"NCCL's example plugin, same CSV", example, "NCCL_TUNER_CONFIG_FILE", f.csv.string(), {}});
  for (auto& c : cases) cold_sample(c.plugin, c.var, c.profile);  // page cache warm, as for later jobs
  for (int i = 0; i < samples; ++i)
    for (auto& c : cases)
      if (auto s = cold_sample(c.plugin, c.var, c.profile)) c.samples.push_back(*s);
  std::printf(
      "\nCold start in a fresh process (fork + exec per sample, %d samples each, interleaved), 10000 rules,\n"
      "first init's CPU time [wall time] (dlopen not included):\n",
      samples);
  for (const auto& c : cases)
    std::printf("  %-50s %s  [%s]\n", c.label, spread(c.samples, &ColdSample::cpu_ms).c_str(),
                spread(c.samples, &ColdSample::wall_ms).c_str());
  std::vector<double> ours_v, example_v;
  for (const auto& s : cases[0].samples) ours_v.push_back(s.cpu_ms);
  const double ours = median_of(ours_v);
  bool met = !cases[0].samples.empty() && ours < 2.5;
  if (cases.size() > 3) {
    for (const auto& s : cases[3].samples) example_v.push_back(s.cpu_ms);
    const double theirs = median_of(example_v);
    met = met && !example_v.empty() && ours <= theirs;
    std::printf(
        "  compiled rules vs NCCL's example plugin: %.2f ms vs %.2f ms, %.2fx  (target < 2.5 ms and no "
        "slower: "
        "%s)\n",
        ours, theirs, theirs / ours, met ? "met" : "MISSED");
  } else {
    std::printf(
        "  NCCL's example plugin not measured here (set AUTOTUNE_BENCH_EXAMPLE_PLUGIN to a build of it); "
        "it took\n"
        "  3.0-4.1 ms on the build machine. Compiled rules %.2f ms  (target < 2.5 ms: %s)\n",
        ours, met ? "met" : "MISSED");
  }
  return met;
}

}  // namespace

BENCHMARK(BM_getCollInfo)->Args({10, 0})->Args({1000, 0})->Args({10000, 0})->Args({1000, 1});
BENCHMARK(BM_linear_scan)->Arg(10)->Arg(1000)->Arg(10000);
BENCHMARK(BM_init)->Args({10000, 0})->Args({10000, 1})->Args({10000, 2})->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Plugin::get();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::printf("\nSummary, in CPU time of the calling thread (plugin loaded with dlopen from %s):\n",
              AUTOTUNE_PLUGIN_PATH);
  bool all_met = true;
  // A filtered run (--benchmark_filter) leaves some figures out: their targets are then not judged, and the
  // last line must not say "all met" for them.
  bool all_judged = true;
  for (int n : {10, 1000, 10000}) {
    auto p = g_ns.find("plugin/" + std::to_string(n)), s = g_ns.find("scan/" + std::to_string(n));
    if (p == g_ns.end() || s == g_ns.end()) {
      if (p != g_ns.end())
        std::printf("  getCollInfo, %5d rules: %6.1f ns/call; linear scan not run%s\n", n, p->second,
                    n == 10 ? "" : ": target not judged");
      all_judged = all_judged && n == 10;  // 10 rules have no target
      continue;
    }
    std::printf("  getCollInfo, %5d rules: %6.1f ns/call; linear scan %8.1f ns; %6.1fx faster", n, p->second,
                s->second, s->second / p->second);
    if (n == 1000) {
      bool met = p->second < 30.0 && s->second / p->second >= 10.0;
      all_met = all_met && met;
      std::printf("  (target < 30 ns and >= 10x: %s)", met ? "met" : "MISSED");
    }
    if (n == 10000) {
      bool met = p->second < 40.0;
      all_met = all_met && met;
      std::printf("  (target < 40 ns: %s)", met ? "met" : "MISSED");
    }
    std::printf("\n");
  }
  if (auto o = g_ns.find("online/1000"), p = g_ns.find("plugin/1000"); o != g_ns.end() && p != g_ns.end())
    std::printf(
        "  getCollInfo,  1000 rules under [online] (exploring 5%% of calls): %.1f ns/call, %+.1f ns\n",
        o->second, o->second - p->second);
  auto cold = g_ns.find("init_cold/10000"), warm = g_ns.find("init_warm/10000");
  auto first = g_ns.find("init_cold_compiled/10000");
  if (first != g_ns.end() && warm != g_ns.end()) {
    const bool met = warm->second <= 20e3;
    all_met = all_met && met;
    std::printf(
        "  init, 10000 rules: a later communicator of the process %.1f us; the first (read + compile, "
        "compiled rules) %.3f ms  (target <= 20 us: %s)\n",
        warm->second / 1e3, first->second / 1e6, met ? "met" : "MISSED");
  }
  if (cold != g_ns.end() && warm != g_ns.end()) {
    std::printf(
        "  init, 10000 rules: first from the TOML (read + parse + compile) %.2f ms, later %.3f ms; "
        "first/later %.0fx\n",
        cold->second / 1e6, warm->second / 1e6, cold->second / warm->second);
    if (auto parse = g_ns.find("toml_parse/10000"); parse != g_ns.end())
      std::printf(
          "    toml++ parse alone of the same file (the floor under cold, alternating): %.2f ms, %.0f%% of "
          "cold\n",
          parse->second / 1e6, 100.0 * parse->second / cold->second);
    if (auto compiled = g_ns.find("init_cold_compiled/10000"); compiled != g_ns.end()) {
      bool met = compiled->second < 5e6;
      all_met = all_met && met;
      std::printf(
          "  init, 10000 rules, cold with compiled rules (.rules beside the TOML): %.2f ms; TOML alone "
          "%.2f ms; %.1fx faster  (target < 5 ms: %s)\n",
          compiled->second / 1e6, cold->second / 1e6, cold->second / compiled->second,
          met ? "met" : "MISSED");
    }
  }
  const char* cold_env = std::getenv("AUTOTUNE_BENCH_COLD_SAMPLES");
  const int cold_samples = cold_env ? std::atoi(cold_env) : 25;
  if (cold_samples > 0) all_met = cold_start_report(cold_samples) && all_met;
  std::printf("  zero allocations per call: checked by test_plugin_alloc\n");
  if (warm == g_ns.end() || first == g_ns.end() || cold == g_ns.end()) all_judged = false;
  if (cold_samples <= 0) all_judged = false;
  std::printf("  targets: %s\n", !all_met     ? "NOT all met"
                                 : all_judged ? "all met"
                                              : "those judged met; others not run (filtered), not judged");
  return 0;
}
