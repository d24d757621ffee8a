// Probe time per recorded fixture, per bundled example and live, against a baseline measured in the same run:
// the bare pugixml parse of the same file (so the ratio is our overhead on top of reading the XML), and for
// the live probe hwloc's own load of the node with I/O kept (the floor of any hwloc-based probe). Target:
// every probe (read + analysis + fingerprint) under 100 ms.

#include <benchmark/benchmark.h>
#include <hwloc.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <pugixml.hpp>
#include <string>
#include <vector>

#include "common/input_file.hpp"
#include "topology/analysis.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/reader.hpp"

namespace fs = std::filesystem;
using namespace autotune::topology;

namespace {

struct Input {
  std::string name;
  fs::path file;  // empty: example or live
};

std::vector<Input> inputs() {
  std::vector<Input> in;
  // The recorded machines beside the repository (CMake passes absolute source paths, so __FILE__ locates
  // them).
  const fs::path shared = fs::path(__FILE__).parent_path().parent_path() / "../shared/fixtures/topology";
  for (const char* dir : {"nccl-xml", "hwloc-xml"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(shared / dir, ec))
      in.push_back({e.path().filename().string(), e.path()});
  }
  for (const auto& n : example_names()) in.push_back({"example:" + n, {}});
  in.push_back({"live", {}});
  return in;
}

void probe(const Input& in) {
  Topology t = !in.file.empty()                    ? read_topology_file(in.file)
               : in.name.rfind("example:", 0) == 0 ? load_example(in.name.substr(8))
                                                   : probe_live();
  const Analysis a = analyze(t);
  benchmark::DoNotOptimize(a.paths.data());
  benchmark::DoNotOptimize(fingerprint(t, 228));
}

void baseline(const Input& in) {
  if (in.name == "live") {
    // The live probe's floor: hwloc's own load of this node with I/O objects kept.
    hwloc_topology_t t = nullptr;
    hwloc_topology_init(&t);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_load(t);
    hwloc_topology_destroy(t);
    return;
  }
  if (in.file.empty()) return;
  const std::string text = autotune::read_file(in.file);
  pugi::xml_document doc;
  benchmark::DoNotOptimize(doc.load_buffer(text.data(), text.size()));
}

double mean_ms(void (*f)(const Input&), const Input& in, int reps) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f(in);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / reps;
}

}  // namespace

int main(int argc, char** argv) {
  const auto all = inputs();
  for (const auto& in : all) {
    benchmark::RegisterBenchmark(("probe/" + in.name).c_str(), [in](benchmark::State& s) {
      for (auto _ : s) probe(in);
    })->Unit(benchmark::kMillisecond);
    if (!in.file.empty() || in.name == "live")
      benchmark::RegisterBenchmark(("baseline/" + in.name).c_str(), [in](benchmark::State& s) {
        for (auto _ : s) baseline(in);
      })->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::printf("\n%-44s %12s %14s %8s   target < 100 ms\n", "probe (read + analyze + fingerprint)", "ms",
              "baseline ms", "ratio");
  bool ok = true;
  for (const auto& in : all) {
    const double p = mean_ms(probe, in, in.name == "live" ? 5 : 20);
    const double b =
        in.file.empty() && in.name != "live" ? 0.0 : mean_ms(baseline, in, in.name == "live" ? 5 : 20);
    const bool met = p < 100.0;
    ok = ok && met;
    if (b > 0)
      std::printf("%-44s %12.3f %14.3f %7.1fx   %s\n", in.name.c_str(), p, b, p / b, met ? "met" : "MISSED");
    else
      std::printf("%-44s %12.3f %14s %8s   %s\n", in.name.c_str(), p, "-", "-", met ? "met" : "MISSED");
  }
  return ok ? 0 : 1;
}
