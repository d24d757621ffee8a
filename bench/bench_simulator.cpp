// Simulated measurements per second: a full sweep (5 collectives x 31 sizes x every candidate) through
// SimRunner, against a baseline loop that only evaluates the cost formula (SimModel::true_time_us) for the
// same points. Target: the full sweep well under a second.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>

#include "runners/process_group.hpp"
#include "simulator/sim_runner.hpp"

using namespace autotune;
using namespace autotune::runners;
using namespace autotune::sim;

namespace {
const SingleProcess kAlone;
}  // namespace

namespace {

topology::Topology h100_node() {
  topology::Topology t;
  t.origin = "bench:h100-8x";
  for (int i = 0; i < 8; ++i) {
    topology::Gpu g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.sm = 90;
    topology::NvLink l;
    l.remote = topology::NvLinkRemote::nvswitch;
    l.count = 18;
    g.nvlinks.push_back(l);
    t.gpus.push_back(g);
  }
  t.nvswitch_seen = true;
  for (int i = 0; i < 8; ++i) {
    topology::Nic n;
    n.name = "mlx5_" + std::to_string(i);
    topology::NicPort port;
    port.speed_gbps = 400;
    n.ports.push_back(port);
    t.nics.push_back(n);
  }
  return t;
}

std::vector<MeasureRequest> full_sweep() {
  std::vector<MeasureRequest> batch;
  for (auto c : nccl::kAllCollectives)
    for (uint64_t b = 8; b <= (8ULL << 30); b *= 2) {
      MeasureRequest r;
      r.collective = c;
      r.bytes = b;
      batch.push_back(r);  // NCCL's default
      for (auto a : nccl::kAllAlgorithms)
        for (auto p : nccl::kAllProtocols) {
          if (!nccl::is_allowed(c, a, p)) continue;
          for (int ch : {0, 1, 4, 16}) {
            r.candidate = Candidate{a, p, ch};
            batch.push_back(r);
          }
        }
    }
  return batch;
}

SimModel model() {
  return SimModel(describe_cluster(h100_node(), 2));
}

void BM_SimRunnerFullSweep(benchmark::State& state) {
  SimRunner runner(model(), 1, 0.03, kAlone);
  auto batch = full_sweep();
  for (auto _ : state) benchmark::DoNotOptimize(runner.run(batch));
  state.counters["measurements_per_s"] =
      benchmark::Counter(static_cast<double>(batch.size()) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["sweep_size"] = static_cast<double>(batch.size());
}

void BM_BaselineCostFormula(benchmark::State& state) {
  SimModel m = model();
  auto batch = full_sweep();
  for (auto _ : state) {
    double sum = 0.0;
    for (const auto& r : batch) {
      auto choice = m.resolve(r.collective, r.bytes, r.candidate);
      if (choice) sum += m.true_time_us(r.collective, r.bytes, *choice);
    }
    benchmark::DoNotOptimize(sum);
  }
  state.counters["measurements_per_s"] =
      benchmark::Counter(static_cast<double>(batch.size()) * state.iterations(), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_SimRunnerFullSweep)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineCostFormula)->Unit(benchmark::kMillisecond);

// One timed sweep of each, printed as a ratio beside the target.
void print_summary() {
  auto batch = full_sweep();
  SimRunner runner(model(), 1, 0.03, kAlone);
  SimModel m = model();
  auto t0 = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(runner.run(batch));
  auto t1 = std::chrono::steady_clock::now();
  double sum = 0.0;
  for (const auto& r : batch)
    if (auto c = m.resolve(r.collective, r.bytes, r.candidate))
      sum += m.true_time_us(r.collective, r.bytes, *c);
  benchmark::DoNotOptimize(sum);
  auto t2 = std::chrono::steady_clock::now();
  double sweep_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  double base_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  std::printf(
      "full simulated sweep: %zu measurements in %.2f ms (baseline cost-formula loop %.2f ms, ratio %.2fx); "
      "target < 1000 ms: %s\n",
      batch.size(), sweep_ms, base_ms, base_ms > 0 ? sweep_ms / base_ms : 0.0,
      sweep_ms < 1000 ? "met" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  print_summary();
  return 0;
}
