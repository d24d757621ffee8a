#include "simulator/sim_cluster.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "common/input_error.hpp"
#include "simulator/nccl_search.hpp"

namespace autotune::sim {

namespace {

// NVLink per-link GB/s by SM (NCCL-FACTS.md).
double nvlink_link_gbps(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86) return 12.0;
  if (sm >= 70) return 20.0;
  return 18.0;
}

int sm_from_name(const std::string& name) {
  struct Known {
    const char* token;
    int sm;
  };
  static constexpr Known kKnown[] = {{"B200", 100}, {"GB200", 100}, {"B100", 100}, {"H200", 90}, {"H100", 90},
                                     {"H800", 90},  {"GH200", 90},  {"A100", 80},  {"A800", 80}, {"A30", 80},
                                     {"A40", 86},   {"A10", 86},    {"V100", 70}};
  for (const auto& k : kKnown)
    if (name.find(k.token) != std::string::npos) return k.sm;
  return 0;
}

// NVLink line rate per link and direction, GB/s: NVLink 2, 3 and 4 carry 25, NVLink 5 50 (NVIDIA's
// datasheets: 300/600/900/1800 GB/s per GPU over 6/12/18/18 links, both directions); the A40's bridge 14.
double nvlink_line_gbps(int sm) {
  if (sm >= 100) return 50.0;
  if (sm == 86) return 14.0625;
  return 25.0;
}

// The PCIe link's raw rate after line encoding (128b/130b from Gen3 on).
double pcie_line_gbps(const topology::PcieLink& link) {
  if (link.width <= 0 || link.speed_gts <= 0.0) return 28.2;  // unknown: a Gen4 x16 in practice
  double encoding = link.speed_gts >= 8.0 ? 128.0 / 130.0 : 0.8;
  return link.width * link.speed_gts * encoding / 8.0;
}

// About 85% of the raw rate is reachable with real payloads.
double pcie_gbps(const topology::PcieLink& link) {
  if (link.width <= 0 || link.speed_gts <= 0.0) return 24.0;  // unknown: a Gen4 x16 in practice
  return pcie_line_gbps(link) * 0.85;
}

// A PCIe link as NCCL's topology weighs it: lanes (16 when unknown) x the generation's 100 Mb/s per lane
// (kvDictPciGen: 2.5 GT/s 15 ... 64 GT/s 480) / 80; an unknown speed reads as PCI_BW (Gen3 x16).
double nccl_pcie_gbps(const topology::PcieLink& link) {
  struct Gen {
    double gts, per_lane;
  };
  static constexpr Gen kGens[] = {{2.5, 15}, {5.0, 30}, {8.0, 60}, {16.0, 120}, {32.0, 240}, {64.0, 480}};
  const int width = link.width > 0 ? link.width : 16;
  for (const auto& g : kGens)
    if (std::abs(link.speed_gts - g.gts) < 0.01) return width * g.per_lane / 80.0;
  return 12.0;
}

// The link between CPU sockets as NCCL weighs it (topo.cc, ncclTopoGetInterCpuBw): AMD 16; Intel by model
// (Emerald Rapids 40, Sapphire Rapids 22, Skylake 10, older 6); ARM 6, POWER 32, anything else LOC_BW.
double nccl_inter_cpu_gbps(const topology::Topology& topo) {
  const std::string& arch = topo.cpu_arch;
  if (arch.find("ppc") != std::string::npos) return 32.0;
  if (arch.find("arm") != std::string::npos || arch.find("aarch") != std::string::npos) return 6.0;
  if (topo.cpu_vendor == "AuthenticAMD") return 16.0;
  if (topo.cpu_vendor == "GenuineIntel") {
    if (topo.cpu_family == 6 && topo.cpu_model == 0xcf) return 40.0;
    if (topo.cpu_family == 6 && topo.cpu_model == 0x8f) return 22.0;
    if (topo.cpu_family == 6 && topo.cpu_model == 0x55) return 10.0;
    return 6.0;
  }
  return 5000.0;
}

void set_nccl_links(const topology::Topology& topo, SimCluster& c) {
  double pci = std::numeric_limits<double>::infinity();
  std::set<int> numa;
  for (const auto& g : topo.gpus) {
    pci = std::min(pci, nccl_pcie_gbps(g.link));
    // A ring's channel crosses the switches' links above the GPU too, where the source gave them.
    for (const auto& a : g.pci_path)
      if (a.is_switch && a.link.speed_gts > 0) pci = std::min(pci, nccl_pcie_gbps(a.link));
    numa.insert(g.numa_node);
  }
  c.nccl_pci_gbps = pci;
  c.nccl_cpu_gbps = numa.size() > 1 ? nccl_inter_cpu_gbps(topo) : 0.0;
  c.cpu_amd = topo.cpu_vendor == "AuthenticAMD";
}

// Each fault names a node, NIC or GPU this cluster has; NIC faults get the NIC's name (what NCCL_IB_HCA
// selects by).
void resolve_faults(const topology::Topology& topo, SimCluster& c, std::vector<SimFault> faults) {
  for (auto& f : faults) {
    const std::string what = describe_fault(f);
    if (f.kind == SimFault::Kind::spine) continue;  // no node or device of its own
    if (f.node >= c.nodes)
      throw InputError("--sim-fault", 0,
                       "expected a node below --nodes " + std::to_string(c.nodes) +
                           " (nodes count from 0); found " + what);
    if (f.kind == SimFault::Kind::nic_rate) {
      if (f.device >= static_cast<int>(topo.nics.size()))
        throw InputError("--sim-fault", 0,
                         "expected nic= below " + std::to_string(topo.nics.size()) +
                             " (the probed node's NICs, from 0); found " + what);
      f.nic = topo.nics[static_cast<size_t>(f.device)].name;
      const bool active =
          std::any_of(c.nics.begin(), c.nics.end(), [&](const SimNic& n) { return n.name == f.nic; });
      if (!active)
        throw InputError(
            "--sim-fault", 0,
            "expected a NIC with an active port; found " + describe_fault(f) + ", which has none");
    } else if (f.device >= c.gpus_per_node) {
      throw InputError(
          "--sim-fault", 0,
          "expected gpu= below " + std::to_string(c.gpus_per_node) + " (GPUs per node); found " + what);
    }
  }
  c.faults = std::move(faults);
}

}  // namespace

int SimCluster::generation() const {
  if (sm >= 100) return 3;
  if (sm >= 90) return 2;
  if (sm >= 80) return 1;
  return 0;
}

std::vector<int> rail_nics(int nics, int gpus, int gpu) {
  std::vector<int> out;
  if (nics < 1 || gpus < 1) return out;
  for (int j = 0; j < nics; ++j)
    if (nics >= gpus ? j * gpus / nics == gpu : gpu * nics / gpus == j) out.push_back(j);
  return out;
}

bool SimCluster::holds_gpu(int gpu) const {
  if (first_gpu < 0 || node_gpus < 1) return true;
  return (gpu - first_gpu + node_gpus) % node_gpus < gpus_per_node;
}

double SimNic::gbytes_per_s() const {
  double sum = 0.0;
  for (const auto& p : ports) sum += p.gbytes_per_s;
  return sum;
}

double SimCluster::net_gbps() const {
  double sum = 0.0;
  for (const auto& n : nics) sum += n.gbytes_per_s();
  return sum;
}

SimCluster describe_cluster(const topology::Topology& topo, int nodes, std::vector<SimFault> faults) {
  if (topo.gpus.empty())
    throw InputError(topo.origin, 0, "a topology with at least one GPU to simulate, found none");
  if (nodes < 1)
    throw InputError("<arguments>", 0, "a node count of at least 1, found " + std::to_string(nodes));
  SimCluster c;
  c.nodes = nodes;
  c.gpus_per_node = static_cast<int>(topo.gpus.size());
  const auto& gpu = topo.gpus.front();
  c.gpu_model = gpu.name.empty() ? "unknown GPU" : gpu.name;
  c.sm = gpu.sm > 0 ? gpu.sm : sm_from_name(gpu.name);
  if (c.sm == 0) {
    char device[16];
    std::snprintf(device, sizeof device, "0x%04x", gpu.pci_device_id);
    throw InputError(
        topo.origin, 0,
        "a GPU whose architecture the simulator knows (an sm= in the file, or a name such as H100 "
        "or A100), found '" +
            (gpu.name.empty() ? std::string("unnamed") : gpu.name) + "' (PCI device " + device +
            "): it would have to guess NCCL's tables and the NVLink speed");
  }

  // The slowest GPU decides a collective, so take the fewest working NVLinks.
  int min_links = -1;
  bool to_switch = false;
  for (const auto& g : topo.gpus) {
    int links = 0;
    for (const auto& l : g.nvlinks) {
      if (!l.up) continue;
      links += l.count;
      if (l.remote == topology::NvLinkRemote::nvswitch) to_switch = true;
    }
    min_links = min_links < 0 ? links : std::min(min_links, links);
  }
  c.nvswitch = !topo.nvswitches.empty() || topo.nvswitch_seen || to_switch;
  c.nvlink = c.gpus_per_node > 1 && min_links > 0;
  c.intra_gbps = c.nvlink ? min_links * nvlink_link_gbps(c.sm) : pcie_gbps(gpu.link);
  c.intra_line_gbps = c.nvlink ? min_links * nvlink_line_gbps(c.sm) : pcie_line_gbps(gpu.link);
  c.nvls = c.nvswitch && c.nvlink && c.sm >= 90 && topo.cuda_multicast.value_or(true);

  for (const auto& nic : topo.nics) {
    SimNic n;
    n.name = nic.name;
    n.collnet = nic.collnet;
    for (const auto& p : nic.ports)
      if (p.state == "ACTIVE" && p.speed_gbps > 0)
        n.ports.push_back({p.port, p.speed_gbps / 8.0 * kNicPayloadShare});  // ~48 GB/s per NDR port
    if (n.ports.empty()) continue;  // a NIC with no working port carries nothing
    c.collnet = c.collnet || n.collnet;
    c.nics.push_back(n);
  }
  if (nodes > 1 && c.nics.empty())
    throw InputError(topo.origin, 0,
                     "a node with at least one NIC that has an active port, to simulate " +
                         std::to_string(nodes) +
                         " nodes; found none (a skeleton file names no ports: probe the node itself, or "
                         "simulate one node)");
  const bool says_pcie =
      gpu.name.find("PCIe") != std::string::npos || gpu.name.find("PCIE") != std::string::npos;
  if (c.gpus_per_node > 1 && min_links == 0 && c.sm >= 60 && !says_pcie)
    c.assumptions.push_back("no NVLink listed for the " + std::to_string(c.gpus_per_node) + " " +
                            c.gpu_model + " GPUs: modelled as PCIe only");
  c.node_gpus = c.gpus_per_node;
  set_nccl_links(topo, c);
  c.max_channels = search_graphs(c).comm_channels;
  resolve_faults(topo, c, std::move(faults));
  return c;
}

SimCluster shape_cluster(const SimCluster& whole, int ranks_per_node, bool concurrent) {
  // Groups running at once tile the node, so they must divide it; one group alone may take any part of it.
  if (ranks_per_node < 1 || ranks_per_node > whole.node_gpus ||
      (concurrent && whole.node_gpus % ranks_per_node != 0))
    throw InputError(
        "<arguments>", 0,
        (concurrent ? "a number of ranks per node that divides the node's " +
                          std::to_string(whole.node_gpus) + " GPUs"
                    : "1 to " + std::to_string(whole.node_gpus) + " ranks per node (the node's GPUs)") +
            ", found " + std::to_string(ranks_per_node));
  SimCluster c = whole;
  c.gpus_per_node = ranks_per_node;
  c.groups_per_node = concurrent ? whole.node_gpus / ranks_per_node : 1;
  // One GPU of a node has no NVLink peer in its own communicator.
  if (ranks_per_node == 1) c.nvls = false;
  c.max_channels = search_graphs(c).comm_channels;  // NCCL searches each communicator's own GPUs
  return c;
}

}  // namespace autotune::sim
