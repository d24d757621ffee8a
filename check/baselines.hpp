#pragma once
// What check's passes (check_plan.hpp) say about each device: every node's own all-reduce, every GPU's
// best pair and every rail's best pair of nodes, each the bus bandwidth of the group it ran in; each rail's
// send/recv ring across every node and the job's all-to-all; the medians over the job; and what the probe
// says each node's hardware can do. A device's figure is the best of the groups it was in, so a healthy
// device paired once with a sick one still shows healthy, and the sick one, slow in every group it was in,
// stands out. Value types and pure functions.

#include <optional>
#include <string>
#include <vector>

#include "check/check_plan.hpp"
#include "topology/model.hpp"

namespace autotune::check {

// One pass's outcome: each group's bus bandwidth (group order), or why it could not measure.
struct PassResult {
  Pass pass;
  std::vector<double> group_busbw_gbps;
  std::string error;  // empty when it measured
};

struct NodeBaselines {
  std::optional<double> allreduce_gbps;          // the node's own all-reduce (1xG)
  std::vector<std::optional<double>> gpu_gbps;   // per GPU: its best pair (1x2)
  std::vector<std::optional<double>> rail_gbps;  // per rail (local rank): its best pair of nodes (2x1)
  std::vector<std::optional<double>> ring_gbps;  // per rail: its send/recv ring across every node (Nx1)
};

struct Baselines {
  std::vector<NodeBaselines> nodes;
  // Medians over every node, every GPU of every node, every rail of every node; 0 where nothing measured.
  double allreduce_median = 0.0, gpu_median = 0.0, rail_median = 0.0, ring_median = 0.0;
  std::optional<double> alltoall_gbps;  // the whole job's all-to-all (NxG)
};

Baselines collect_baselines(const std::vector<PassResult>& passes, int nodes, int gpus_per_node);

// What a node's hardware can do, from its probe: the intra-node bandwidth per GPU NCCL counts on (NVLink
// links x the per-link bandwidth of the GPU generation, the slowest GPU's, or the PCIe link), and per rail
// the share of its NICs' active port rate it gets when every rail runs at once; and which NICs each rail
// uses (the GPU's nearest NICs where the probe can tell, else the NICs in order as rail_nics() wires them).
struct HardwareFigures {
  double intra_gbps = 0.0;
  std::vector<double> rail_gbps;
  std::vector<std::vector<std::string>> rail_nics;
};

HardwareFigures hardware_figures(const topology::Topology& node, int gpus_per_node);

}  // namespace autotune::check
