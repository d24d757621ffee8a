// Adaptive vs exhaustive search on simulated clusters: the busbw the adaptive strategy's rules lose against
// the exhaustive strategy's (judged by the simulator's truth: summed over every collective and grid size, and
// the worst single size either profile rules on) and the share of the exhaustive measurements it needed
// (targets: at most 1% lost, both ways, with at most 25% of the measurements). How far the rules
// can be trusted (tests/support/strategy_figures.hpp): across five noise seeds of one simulated truth, the
// share of ruled points that four seeds of five agree on (target: at least 90%) and whether each seed finds
// the truth's real gains, at 3% noise and more; and how many of exhaustive's range edges adaptive puts
// within one grid step on the bundled examples. Plus the wall time of a full exhaustive simulated
// calibration of one 8-GPU node (target: seconds).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "calibrate/tune.hpp"
#include "measure/runner_factory.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_model.hpp"
#include "tests/support/strategy_figures.hpp"
#include "topology/examples.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using namespace autotune::search;
using namespace autotune::measure;
using namespace autotune::calibrate;
using namespace autotune::runners;
using namespace autotune::sim;

namespace {

std::string fmt_found(const testing::TruthCheck& t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %d/%d%s", t.found, t.real_gains,
                t.harmful ? (" (" + std::to_string(t.harmful) + " harmful)").c_str() : "");
  return buf;
}

fs::path scratch() {
  fs::path dir = fs::temp_directory_path() / ("autotune-bench-strategy-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TuneResult calibrate(const topology::Topology& topo, int nodes, const std::string& strategy) {
  TuneOptions o;
  o.strategy = strategy;
  o.space.scales = {{nodes, nodes * static_cast<int>(topo.gpus.size())}};
  o.space.settings = {{"default", {}}};
  o.journal = scratch() / (strategy + ".jsonl");
  o.header.source = "simulated";
  return tune(o, [&](const ProcessSetting& s, const Scale& sc) {
    RunnerOptions ro;
    ro.simulate = true;
    ro.topology = topo;
    ro.nodes = sc.nodes;
    ro.process_env = s.env;
    return make_runner(ro);
  });
}

// True busbw of a profile's decision at one grid point (the rule where one matches, else NCCL's choice).
double busbw_at(const SimModel& model, const std::vector<profiles::Rule>& rules, nccl::Collective c,
                uint64_t b, int ranks) {
  SimChoice choice = model.nccl_default(c, b);
  for (const auto& r : rules)
    if (r.collective == c && r.min_bytes <= b && b <= r.max_bytes) {
      Candidate cand{r.algorithm, r.protocol, r.channels};
      if (auto resolved = model.resolve(c, b, cand)) choice = *resolved;
    }
  return static_cast<double>(b) / (model.true_time_us(c, b, choice) * 1e3) *
         nccl::bus_bandwidth_factor(c, ranks);
}

bool ruled(const std::vector<profiles::Rule>& rules, nccl::Collective c, uint64_t b) {
  return std::any_of(rules.begin(), rules.end(), [&](const profiles::Rule& r) {
    return r.collective == c && r.min_bytes <= b && b <= r.max_bytes;
  });
}

struct BusbwFigures {
  double sum = 0;    // over every collective and grid size
  double worst = 0;  // the largest share lost at one point either profile rules on
};

// Adaptive's rules against exhaustive's, judged by the simulator's truth over the grid.
BusbwFigures busbw_loss(const SimModel& model, const std::vector<profiles::Rule>& ex,
                        const std::vector<profiles::Rule>& ad, int ranks) {
  BusbwFigures out;
  double ex_sum = 0, ad_sum = 0;
  for (auto c : nccl::kAllCollectives)
    for (uint64_t b : size_grid(8, 8ull << 30)) {
      const double e = busbw_at(model, ex, c, b, ranks), a = busbw_at(model, ad, c, b, ranks);
      ex_sum += e, ad_sum += a;
      if (ruled(ex, c, b) || ruled(ad, c, b)) out.worst = std::max(out.worst, (e - a) / e);
    }
  out.sum = (ex_sum - ad_sum) / ex_sum;
  return out;
}

double busbw_sum(const SimModel& model, const std::vector<profiles::Rule>& rules, int ranks) {
  double sum = 0;
  for (auto c : nccl::kAllCollectives)
    for (uint64_t b : size_grid(8, 8ull << 30)) sum += busbw_at(model, rules, c, b, ranks);
  return sum;
}

void compare(const char* example, int nodes) {
  auto topo = topology::load_example(example);
  auto ex = calibrate(topo, nodes, "exhaustive");
  auto ad = calibrate(topo, nodes, "adaptive");
  SimModel model(describe_cluster(topo, nodes), {}, RunnerOptions{}.deviations);
  int ranks = nodes * static_cast<int>(topo.gpus.size());
  double none = busbw_sum(model, {}, ranks);
  double ex_sum = busbw_sum(model, ex.profile.rules, ranks);
  const BusbwFigures lost = busbw_loss(model, ex.profile.rules, ad.profile.rules, ranks);
  std::printf(
      "%-14s x%d: exhaustive %4llu measurements, %2zu rules, busbw sum %+.2f%% vs NCCL default | adaptive "
      "%4llu measurements (%.1f%% of exhaustive, target <= 25%%), %2zu rules, busbw loss vs exhaustive "
      "%.3f%% over the grid, %.3f%% at worst at one ruled size (target <= 1%%)\n",
      example, nodes, static_cast<unsigned long long>(ex.measured), ex.profile.rules.size(),
      (ex_sum / none - 1) * 100, static_cast<unsigned long long>(ad.measured),
      100.0 * static_cast<double>(ad.measured) / static_cast<double>(ex.measured), ad.profile.rules.size(),
      lost.sum * 100, lost.worst * 100);
}

// `tune --simulate --example E --nodes N --strategy S --seed 1..5 --noise X`: seed agreement and the truth.
void seeds(const char* example, int nodes, const char* strategy, double noise) {
  std::vector<testing::SimulatedCalibration> runs;
  std::string truth;
  uint64_t measured = 0, samples = 0;
  double timed = 0.0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    runs.push_back(testing::simulated_tune({example, nodes, strategy, seed, noise, {}, {}}));
    auto t = testing::truth_check(runs.back(), 0.03);
    truth += fmt_found(t);
    measured += runs.back().result.measured;
    samples += runs.back().samples;
    timed += runs.back().timed_s;
  }
  auto a = testing::seed_agreement(runs, 4);
  std::printf(
      "seeds %-12s x%d %-10s noise %4.1f%%: %3d points ruled by some seed, %5.1f%% agree in 4 of 5 seeds "
      "(target >= 90%%); real gains found per seed:%s; per seed %llu measurements, %llu repetitions, "
      "%.2f s of timed operations\n",
      example, nodes, strategy, noise * 100, a.ruled, a.share() * 100, truth.c_str(),
      static_cast<unsigned long long>(measured / 5), static_cast<unsigned long long>(samples / 5), timed / 5);
}

// Adaptive's range edges against exhaustive's, same seed, every bundled example.
void edges(const char* example, int nodes) {
  auto ex = testing::simulated_tune({example, nodes, "exhaustive", 1, 0.03, {}, {}});
  auto ad = testing::simulated_tune({example, nodes, "adaptive", 1, 0.03, {}, {}});
  auto e1 = testing::edge_agreement(ex, ad), e2 = testing::edge_agreement(ad, ex);
  std::printf(
      "edges %-12s x%d: %d of %d exhaustive edges have adaptive's within one grid step, %d of %d the other "
      "way (%zu and %zu rules)\n",
      example, nodes, e1.within, e1.edges, e2.within, e2.edges, ex.result.profile.rules.size(),
      ad.result.profile.rules.size());
}

void BM_ExhaustiveOneNode(benchmark::State& state) {
  auto topo = topology::load_example("h100-8x");
  for (auto _ : state) benchmark::DoNotOptimize(calibrate(topo, 1, "exhaustive").measured);
  state.SetLabel(
      "full exhaustive simulated calibration, 8 GPUs, 5 collectives, 8 B - 8 GiB (target: seconds)");
}
BENCHMARK(BM_ExhaustiveOneNode)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AdaptiveOneNode(benchmark::State& state) {
  auto topo = topology::load_example("h100-8x");
  for (auto _ : state) benchmark::DoNotOptimize(calibrate(topo, 1, "adaptive").measured);
  state.SetLabel("same, adaptive (compare with the exhaustive baseline above)");
}
BENCHMARK(BM_AdaptiveOneNode)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  compare("h100-8x", 1);
  compare("h100-8x", 2);
  compare("h100-8x", 8);
  compare("a100-pcie-8x", 1);
  for (double noise : {0.03, 0.06, 0.10}) seeds("h100-8x", 2, "exhaustive", noise);
  for (double noise : {0.03, 0.10}) seeds("h100-8x", 2, "adaptive", noise);
  seeds("a100-pcie-8x", 1, "exhaustive", 0.03);
  for (const auto& name : topology::example_names())
    for (int nodes : {1, 2}) edges(name.c_str(), nodes);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  fs::remove_all(scratch());
  return 0;
}
