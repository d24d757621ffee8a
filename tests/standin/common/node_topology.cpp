#include "tests/standin/common/node_topology.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "topology/examples.hpp"
#include "topology/reader.hpp"

namespace autotune::standin {

namespace {

topology::Topology load() {
  const char* file = std::getenv("NCCL_STANDIN_TOPOLOGY");
  const char* example = std::getenv("NCCL_STANDIN_EXAMPLE");
  try {
    if (file && *file && example && *example)
      throw InputError("<env NCCL_STANDIN_TOPOLOGY>", 0,
                       "either NCCL_STANDIN_TOPOLOGY or NCCL_STANDIN_EXAMPLE, found both");
    if (file && *file) return topology::read_topology_file(file);
    return topology::load_example(example && *example ? example : "h100-8x");
  } catch (const InputError& e) {
    exit_bad_input(e);
  }
}

}  // namespace

const topology::Topology& node_topology() {
  static const topology::Topology topo = load();
  return topo;
}

void exit_bad_input(const InputError& e) {
  std::fprintf(stderr, "nccl-standin: %s\n", e.what());
  std::fflush(stderr);
  std::_Exit(kExitBadInput);
}

}  // namespace autotune::standin
