// import-nccl-tests on a 16 MiB log of the kind NCCL_DEBUG=INFO leaves at scale (per test: the header, 64
// rank lines, 200 NCCL INFO lines, a 24-row table), parsed and converted into journal records (no I/O): MB/s
// against a target of 50 MB/s, beside the floor measured in the same run, the same text cut into lines and
// whitespace-separated words (what any line-by-line reader pays). CPU time: the build machine is shared.

#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "nccl_tests/import_nccl_tests.hpp"
#include "nccl_tests/nccl_tests_file.hpp"

namespace {

using namespace autotune::nccl_tests;

std::string one_test(int index) {
  std::string t =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
  char line[256];
  for (int r = 0; r < 64; ++r) {
    std::snprintf(line, sizeof line,
                  "#  Rank %2d Group  0 Pid %6d on node-%03d device  %d [0x%02x] NVIDIA H100 80GB HBM3\n", r,
                  40000 + r, r / 8, r % 8, 7 + r % 8);
    t += line;
  }
  for (int i = 0; i < 200; ++i) {
    std::snprintf(
        line, sizeof line,
        "node-%03d:%d:%d [%d] NCCL INFO Channel %02d/32 : %d[%d] -> %d[%d] via P2P/IPC/read (test %d)\n",
        i % 8, 40000 + i % 64, 40100 + i % 64, i % 8, i % 32, i % 64, i % 8, (i + 1) % 64, (i + 1) % 8,
        index);
    t += line;
  }
  t += "#\n#                                                              out-of-place                       "
       "in-place\n#       size         count      type   redop    root     time   algbw   busbw #wrong     "
       "time   algbw   busbw #wrong\n#        (B)    (elements)                               (us)  (GB/s)  "
       "(GB/s)            (us)  (GB/s)  (GB/s)\n";
  for (unsigned long long bytes = 8, k = 0; k < 24; bytes *= 2, ++k) {
    std::snprintf(
        line, sizeof line,
        "%12llu  %12llu     float     sum      -1  %7.2f  %6.2f  %6.2f      0  %7.2f  %6.2f  %6.2f      0\n",
        bytes, bytes / 4, 20.0 + k, bytes / 1e3 / (20.0 + k), bytes / 1e3 / (20.0 + k) * 1.9, 21.0 + k,
        bytes / 1e3 / (21.0 + k), bytes / 1e3 / (21.0 + k) * 1.9);
    t += line;
  }
  return t + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.3\n#\n\n";
}

std::string make_log(size_t bytes) {
  std::string text;
  for (int i = 0; text.size() < bytes; ++i) text += one_test(i);
  return text;
}

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double g_import_mbps = 0, g_floor_mbps = 0;

// Alternating the two in each iteration puts both under the same machine load.
void BM_Import16MiB(benchmark::State& state) {
  const std::string text = make_log(16u << 20);
  const double mb = static_cast<double>(text.size()) / 1e6;
  ImportOptions options;
  options.as_default = true;
  options.nodes = 8;
  double import_ns = 0, floor_ns = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_ns();
    size_t words = 0;
    for (std::string_view line : autotune::split(text, '\n'))
      words += autotune::split_whitespace(line).size();
    benchmark::DoNotOptimize(words);
    const double t1 = thread_cpu_ns();
    std::vector<NcclTestsFile> files{parse_nccl_tests_file(text, "bench.log", "allreduce")};
    const ImportResult result = import_nccl_tests(files, options);
    if (result.records.empty()) state.SkipWithError("nothing was imported");
    benchmark::DoNotOptimize(result.records.data());
    const double t2 = thread_cpu_ns();
    floor_ns += t1 - t0;
    import_ns += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  g_import_mbps = mb / (import_ns / n / 1e9);
  g_floor_mbps = mb / (floor_ns / n / 1e9);
}
BENCHMARK(BM_Import16MiB)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  if (g_import_mbps > 0) {
    std::printf("\nsummary (same run, CPU time):\n");
    std::printf("  import-nccl-tests, parse and convert: %.1f MB/s (target >= 50 MB/s: %s)\n", g_import_mbps,
                g_import_mbps >= 50 ? "met" : "MISSED");
    std::printf("  the floor, lines and words alone: %.1f MB/s; import takes %.1fx the floor's time\n",
                g_floor_mbps, g_floor_mbps / g_import_mbps);
  }
  benchmark::Shutdown();
  return 0;
}
