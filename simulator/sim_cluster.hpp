#pragma once
// The simulator's view of a cluster: the few numbers NCCL's cost model depends on (GPU generation, GPUs per
// node, NVLink/PCIe bandwidth, NVSwitch/NVLS, NICs and their speed, SHARP), derived from one probed node
// (topology::Topology) and a node count. Every node is built like the probed one, as on a real homogeneous
// partition; faults (sim_fault.hpp) make some of them sick. A value type; no shared state.

#include <string>
#include <vector>

#include "simulator/sim_fault.hpp"
#include "topology/model.hpp"

namespace autotune::sim {

// NIC payload rate as a share of the line rate (NDR InfiniBand: 46-48 of 50 GB/s; nccl-tests issue 212).
inline constexpr double kNicPayloadShare = 0.96;

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
  bool nvls = false;        // NVLink SHARP: Hopper+ behind NVSwitches, multicast not disproven
  bool collnet = false;     // some NIC is SHARP-capable (CollNet)
  double intra_gbps = 0.0;  // per GPU, one direction: NVLink links x per-link speed, or the PCIe link
  // The same links at their line rate (NVLink 25 GB/s per link and direction up to Hopper, 50 on Blackwell;
  // the PCIe link's raw rate): what the simulated truth is fitted against and never exceeds.
  double intra_line_gbps = 0.0;
  std::vector<SimNic> nics;  // the NICs NCCL would use (after NCCL_IB_HCA)
  // NCCL's own view of the links its search weighs (src/graph/topo.cc), GB/s: a GPU's PCIe link (lanes x
  // generation / 80, the slowest GPU's), and the link between CPU sockets when the GPUs sit on more than
  // one (0 when on one: AMD 16, Intel by model 6 to 40). cpu_amd: NCCL's AMD rows (LL cap, net overhead).
  double nccl_pci_gbps = 0.0;
  double nccl_cpu_gbps = 0.0;
  bool cpu_amd = false;
  // The channels NCCL's search gives a communicator on this cluster (nccl_search.hpp: comm->nChannels).
  int max_channels = 0;
  // What the file did not say and the model had to assume, in words (shown with every simulated figure).
  std::vector<std::string> assumptions;
  // A communicator smaller than a node (gpus_per_node < node_gpus) uses one block of consecutive GPUs, and
  // groups_per_node such communicators run at once on every node (all groups of a shape measured together,
  // as jobs run them): they share the node's NICs.
  int node_gpus = 0;
  int groups_per_node = 1;
  // The allocation's sick nodes, and which of its nodes this communicator spans (empty: 0..nodes-1). A
  // fault slows a collective only when its node is spanned.
  std::vector<SimFault> faults;
  std::vector<int> node_ids;
  // Which block of each node's GPUs this communicator is: its first GPU, the block taking gpus_per_node GPUs
  // from there and wrapping around the node (the other groups of the node take the blocks beside it). -1:
  // the communicator stands for every block at once, paced by the slowest (a fault on any GPU counts).
  int first_gpu = -1;

  int ranks() const { return gpus_per_node * nodes; }
  // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell: the row of NCCL's per-generation tables.
  int generation() const;
  // Sum of the NICs' bandwidth: what one node can push into the network.
  double net_gbps() const;
  // LL128 is safe only where NCCL enables it itself: NVLink-connected Volta..Blackwell.
  bool ll128_safe() const { return nvlink && sm >= 70; }
  // Whether this communicator runs on the node-local GPU `gpu` (every GPU when first_gpu is -1).
  bool holds_gpu(int gpu) const;
};

// The rail of node-local GPU `gpu` among `nics` NICs and `gpus` GPUs (positions in the probed node's
// lists): with at least as many NICs as GPUs, NIC j belongs to GPU j * gpus / nics; with fewer, GPU g uses
// NIC g * nics / gpus. The simulator's wiring, and check's when the probe cannot tell which NICs are near.
std::vector<int> rail_nics(int nics, int gpus, int gpu);

// Throws InputError (file = topology origin) for what it cannot model without guessing: no GPU, nodes < 1,
// a GPU whose architecture is unknown (no SM in the file and a name or device id it does not know), or
// more than one node with no NIC that has an active port (a skeleton file names none); and
// InputError("--sim-fault") for a fault on a node, NIC or GPU the cluster does not have (or a NIC without an
// active port). A GPU whose SM is missing gets it from its name ("H100" -> 90). Several GPUs of an NVLink
// generation with no NVLink listed are modelled as PCIe only, and that assumption is recorded.
SimCluster describe_cluster(const topology::Topology& topo, int nodes, std::vector<SimFault> faults = {});

// The cluster a communicator of `ranks_per_node` ranks on each of `whole.nodes` nodes sees, with every group
// of that shape running at once (node_gpus / ranks_per_node of them per node) when `concurrent`, else alone.
// Throws InputError when ranks_per_node is not 1 to the node's GPUs, or (concurrent) does not divide them.
SimCluster shape_cluster(const SimCluster& whole, int ranks_per_node, bool concurrent);

}  // namespace autotune::sim
