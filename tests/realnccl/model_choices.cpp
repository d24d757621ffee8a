// The simulator's model of NCCL's default choice (simulator/nccl_estimate.hpp) on one node of a bundled
// example, printed as the realnccl agreement test reads real NCCL's TUNING lines:
//   model_choices [--nccl VERSION] EXAMPLE SIZE...   ->   "allreduce 4096 ring ll 1" (collective, bytes,
//                                         algorithm, protocol, channels), for the five collectives at every
//                                         SIZE, with VERSION's tables (2.22.x or 2.29.x; default the newest)
// NVLS is off, as in the real runs (the stand-in driver offers no CUDA multicast). Exit status 2 for bad
// usage.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/input_error.hpp"
#include "nccl/vocabulary.hpp"
#include "simulator/nccl_estimate.hpp"
#include "simulator/sim_cluster.hpp"
#include "topology/examples.hpp"

using namespace autotune;

int main(int argc, char** argv) {
  sim::NcclRelease release = sim::kNewestNcclRelease;
  int first = 1;
  if (argc > 2 && std::string(argv[1]) == "--nccl") {
    const auto r = sim::parse_nccl_release(argv[2]);
    if (!r) {
      std::fprintf(stderr, "model_choices: --nccl '%s': expected 2.22.x or 2.29.x\n", argv[2]);
      return 2;
    }
    release = *r;
    first = 3;
  }
  if (argc < first + 2) {
    std::fprintf(stderr, "usage: model_choices [--nccl VERSION] EXAMPLE SIZE...\n");
    return 2;
  }
  std::vector<uint64_t> sizes;
  for (int i = first + 1; i < argc; ++i) {
    char* end = nullptr;
    sizes.push_back(std::strtoull(argv[i], &end, 10));
    if (*end != '\0' || sizes.back() == 0) {
      std::fprintf(stderr, "model_choices: '%s': expected a size in bytes > 0\n", argv[i]);
      return 2;
    }
  }
  try {
    sim::SimCluster cluster = sim::describe_cluster(topology::load_example(argv[first]), 1);
    cluster.nvls = false;
    const sim::NcclEstimate estimate(cluster, 0.0, release);
    for (nccl::Collective c : nccl::kAllCollectives)
      for (uint64_t bytes : sizes) {
        const sim::SimChoice s = estimate.default_choice(c, bytes);
        std::printf("%s %llu %s %s %d\n", std::string(nccl::name(c)).c_str(),
                    static_cast<unsigned long long>(bytes), std::string(nccl::name(s.algorithm)).c_str(),
                    std::string(nccl::name(s.protocol)).c_str(), s.channels);
      }
  } catch (const InputError& e) {
    std::fprintf(stderr, "model_choices: %s\n", e.what());
    return 2;
  }
  return 0;
}
