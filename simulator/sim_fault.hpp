#pragma once
// Faults the simulator can be told a node has (`--sim-fault`), so that health checks and the search engine
// can be tested against a cluster with a sick node: a NIC at a fraction of its rate, a GPU whose clock is
// held down, a GPU whose NVLinks run at a fraction of their bandwidth. A fault belongs to one node and
// slows only collectives whose communicator spans that node (sim_model.hpp says how). A spine fault belongs
// to no node: the network beyond the leaf switches runs at a fraction of its rate, which only communicators
// over more than `beyond` nodes cross (a large scale's fault that its smaller scales cannot see). Value types
// and pure functions: thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace autotune::sim {

struct SimFault {
  enum class Kind { nic_rate, gpu_clock, nvlink, spine };
  int node = 0;  // index within the simulated allocation
  Kind kind = Kind::nic_rate;
  int device = 0;         // the NIC's position in the probed node's NIC list, or the GPU's index
  double fraction = 1.0;  // of the healthy rate, clock or bandwidth: (0, 1]
  std::string nic;        // the NIC's name, filled in by describe_cluster (sim_cluster.hpp)
  int beyond = 0;         // spine: communicators over more than this many nodes cross the slow spine
  bool operator==(const SimFault&) const = default;
};

// One `--sim-fault` value: "node=3,nic=1,rate=0.5", "node=5,gpu=2,clock=0.6", "node=1,gpu=0,nvlink=0.5"
// or "spine=0.5,beyond=128" (keys in any order, each once). Throws InputError("--sim-fault", 0, ...) saying
// what was expected.
SimFault parse_sim_fault(std::string_view text);

// "node 3: mlx5_1 at 50% of its rate", for the runner's description and messages.
std::string describe_fault(const SimFault& fault);

}  // namespace autotune::sim
