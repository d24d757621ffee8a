// Adaptive vs exhaustive search on simulated clusters: the busbw the adaptive strategy's rules lose against
// the exhaustive strategy's (summed over every collective and grid size, judged by the simulator's truth),
// and the share of the exhaustive measurements it needed (targets: under 1% and under 30%). Plus the wall
// time of a full exhaustive simulated calibration of one 8-GPU node (target: seconds).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "simulator/sim_cluster.hpp"
#include "simulator/sim_model.hpp"
#include "topology/examples.hpp"
#include "tuner/runner_factory.hpp"
#include "tuner/tune.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using namespace autotune::tuner;
using namespace autotune::runners;
using namespace autotune::sim;

namespace {

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

// Total true busbw of a profile's decisions over the grid (the rule where one matches, else NCCL's choice).
double busbw_sum(const SimModel& model, const std::vector<profiles::Rule>& rules, int ranks) {
  double sum = 0;
  for (auto c : nccl::kAllCollectives)
    for (uint64_t b : size_grid(8, 8ull << 30)) {
      SimChoice choice = model.nccl_default(c, b);
      for (const auto& r : rules)
        if (r.collective == c && r.min_bytes <= b && b <= r.max_bytes) {
          Candidate cand{r.algorithm, r.protocol, r.channels};
          if (auto resolved = model.resolve(c, b, cand)) choice = *resolved;
        }
      double t = model.true_time_us(c, b, choice);
      sum += static_cast<double>(b) / (t * 1e3) * nccl::bus_bandwidth_factor(c, ranks);
    }
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
  double ad_sum = busbw_sum(model, ad.profile.rules, ranks);
  std::printf(
      "%-14s x%d: exhaustive %4llu measurements, %2zu rules, busbw sum %+.2f%% vs NCCL default | adaptive "
      "%4llu "
      "measurements (%.1f%% of exhaustive, target < 30%%), %2zu rules, busbw loss vs exhaustive %.3f%% "
      "(target < 1%%)\n",
      example, nodes, static_cast<unsigned long long>(ex.measured), ex.profile.rules.size(),
      (ex_sum / none - 1) * 100, static_cast<unsigned long long>(ad.measured),
      100.0 * static_cast<double>(ad.measured) / static_cast<double>(ex.measured), ad.profile.rules.size(),
      (ex_sum - ad_sum) / ex_sum * 100);
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
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  fs::remove_all(scratch());
  return 0;
}
