#pragma once
// The simulator's view of a cluster: the few numbers NCCL's cost model depends on (GPU generation, GPUs per
// node, NVLink/PCIe bandwidth, NVSwitch/NVLS, NICs and their speed, SHARP), derived from one probed node
// (topology::Topology) and a node count. Every node is assumed to be like the probed one, as on a real
// homogeneous partition. A value type; no shared state.

#include <string>
#include <vector>

#include "topology/model.hpp"

namespace autotune::sim {

struct SimPort {
  int port = 1;               // verbs port number: what NCCL_IB_HCA's ":port" names
  double gbytes_per_s = 0.0;  // what it carries in practice, GB/s
};

struct SimNic {
  std::string name;            // "mlx5_0": what NCCL_IB_HCA's device names match
  std::vector<SimPort> ports;  // the ACTIVE ones NCCL would use
  bool collnet = false;
  double gbytes_per_s() const;  // sum of its ports
};

struct SimCluster {
  std::string gpu_model;
  int sm = 0;  // 70, 80, 90, 100
  int gpus_per_node = 0;
  int nodes = 1;
  bool nvlink = false;  // GPUs reach each other over NVLink (else PCIe)
  bool nvswitch = false;
  bool nvls = false;         // NVLink SHARP: Hopper+ behind NVSwitches, multicast not disproven
  bool collnet = false;      // some NIC is SHARP-capable (CollNet)
  double intra_gbps = 0.0;   // per GPU, one direction: NVLink links x per-link speed, or the PCIe link
  std::vector<SimNic> nics;  // the NICs NCCL would use (after NCCL_IB_HCA)
  int max_channels = 0;      // what NCCL sets up per communicator on this kind of node
  // What the file did not say and the model had to assume, in words (shown with every simulated figure).
  std::vector<std::string> assumptions;

  int ranks() const { return gpus_per_node * nodes; }
  // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell: the row of NCCL's per-generation tables.
  int generation() const;
  // Sum of the NICs' bandwidth: what one node can push into the network.
  double net_gbps() const;
  // LL128 is safe only where NCCL enables it itself: NVLink-connected Volta..Blackwell.
  bool ll128_safe() const { return nvlink && sm >= 70; }
};

// Throws InputError (file = topology origin) for what it cannot model without guessing: no GPU, nodes < 1,
// a GPU whose architecture is unknown (no SM in the file and a name or device id it does not know), or
// more than one node with no NIC that has an active port (a skeleton file names none). A GPU whose SM is
// missing gets it from its name ("H100" -> 90). Several GPUs of an NVLink generation with no NVLink listed
// are modelled as PCIe only, and that assumption is recorded.
SimCluster describe_cluster(const topology::Topology& topo, int nodes);

}  // namespace autotune::sim
