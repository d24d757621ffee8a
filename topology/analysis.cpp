#include "topology/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "topology/nvlink.hpp"

namespace autotune::topology {
namespace {

bool is_live(const Topology& t) {
  return t.from_live_node;
}

std::vector<const NicPort*> active_ports(const Nic& n) {
  std::vector<const NicPort*> out;
  for (const auto& p : n.ports)
    if (p.state == "ACTIVE") out.push_back(&p);
  return out;
}

Feature nvls_feature(const Topology& t, bool nvswitch) {
  if (t.gpus.empty()) return {FeatureStatus::not_available, "no GPUs seen"};
  int min_sm = 1000;
  for (const auto& g : t.gpus) min_sm = std::min(min_sm, g.sm);
  if (min_sm > 0 && min_sm < 90)
    return {FeatureStatus::not_available,
            "GPUs are sm " + std::to_string(min_sm) + "; NVLS needs Hopper (sm 90) or newer"};
  if (!nvswitch)
    return {FeatureStatus::not_available,
            "no NVSwitch seen; NVLS needs GPUs behind third-generation NVSwitches"};
  if (min_sm == 0) return {FeatureStatus::unknown, "NVSwitch seen but the GPUs' SM version is unknown"};
  const std::string base = "sm " + std::to_string(min_sm) + " GPUs behind NVSwitch";
  if (t.cuda_multicast.has_value()) {
    if (*t.cuda_multicast) return {FeatureStatus::available, base + ", CUDA reports multicast supported"};
    return {FeatureStatus::not_available, base +
                                              ", but CUDA reports multicast unsupported (fabric manager or "
                                              "driver; check nvidia-fabricmanager)"};
  }
  if (is_live(t)) return {FeatureStatus::unknown, base + "; the CUDA multicast attribute could not be read"};
  return {FeatureStatus::available, base + " (recorded topology: CUDA multicast support not checked)"};
}

Feature collnet_feature(const Topology& t) {
  std::vector<std::string> ib, unknown_layer;
  std::string recorded;
  for (const auto& n : t.nics) {
    for (const auto* p : active_ports(n)) {
      if (p->link_layer == "InfiniBand")
        ib.push_back(n.name);
      else if (p->link_layer == "unknown")
        unknown_layer.push_back(n.name);
    }
    if (n.collnet && recorded.empty()) recorded = n.name;
  }
  if (!recorded.empty())
    return {FeatureStatus::available,
            "NCCL recorded coll=1 on " + recorded + " (a CollNet run succeeded on this node)"};
  if (ib.empty() && unknown_layer.empty())
    return {FeatureStatus::not_available, "no active InfiniBand port (SHARP needs InfiniBand)"};
  const std::string ports =
      ib.empty() ? "active ports of unknown link layer (" + unknown_layer.front() + ")"
                 : "active InfiniBand ports (" + ib.front() + (ib.size() > 1 ? ", ..." : "") + ")";
  if (!t.net_plugins.empty())
    return {FeatureStatus::unknown,
            "CollNet net plugin " + t.net_plugins.front() + " found and " + ports +
                "; whether a SHARP aggregation manager runs on the fabric cannot be seen from a node"};
  if (is_live(t))
    return {FeatureStatus::not_available,
            ports + " but no net plugin exporting ncclCollNetPlugin_v* was found"};
  return {FeatureStatus::unknown, ports + "; a recorded file does not show the net plugins installed"};
}

Feature gdr_feature(const Topology& t) {
  if (is_live(t)) {
    for (const auto& m : t.loaded_modules)
      if (m == "nvidia_peermem" || m == "nv_peer_mem")
        return {FeatureStatus::available, "kernel module " + m + " is loaded"};
    if (!t.health.peer_memory.empty())
      return {FeatureStatus::available, "peer-memory client present (" + t.health.peer_memory.front() + ")"};
    if (t.health.cuda_dma_buf == true && t.health.rdma_dma_buf == true)
      return {FeatureStatus::available, "dma-buf: CUDA and the kernel's RDMA stack both support it"};
    return {
        FeatureStatus::not_available,
        "neither nvidia_peermem nor nv_peer_mem is loaded (/proc/modules)" +
            std::string(t.health.read ? " and dma-buf is not supported by both CUDA and the kernel" : "")};
  }
  for (const auto& n : t.nics)
    if (n.gdr) return {FeatureStatus::available, "NCCL recorded gdr=1 on " + n.name};
  return {FeatureStatus::unknown, "GPUDirect RDMA can only be checked on a live node"};
}

std::string hca_value(const std::vector<std::pair<std::string, int>>& ports) {
  std::string v = "=";
  for (size_t i = 0; i < ports.size(); ++i)
    v += (i ? "," : "") + ports[i].first + ":" + std::to_string(ports[i].second);
  return v;
}

}  // namespace

std::string_view path_name(PathType t) {
  switch (t) {
    case PathType::nvl:
      return "NVL";
    case PathType::pix:
      return "PIX";
    case PathType::pxb:
      return "PXB";
    case PathType::pxn:
      return "PXN";
    case PathType::phb:
      return "PHB";
    case PathType::sys:
      return "SYS";
  }
  return "?";
}

std::string_view shape_name(NvLinkShape s) {
  switch (s) {
    case NvLinkShape::none:
      return "none";
    case NvLinkShape::nvswitch:
      return "nvswitch";
    case NvLinkShape::all_to_all:
      return "all-to-all";
    case NvLinkShape::partial:
      return "partial";
  }
  return "?";
}

std::string_view status_name(FeatureStatus s) {
  switch (s) {
    case FeatureStatus::available:
      return "available";
    case FeatureStatus::not_available:
      return "not available";
    case FeatureStatus::unknown:
      return "unknown";
  }
  return "?";
}

PathType pci_path_type(const std::vector<PciAncestor>& a, int numa_a, const std::vector<PciAncestor>& b,
                       int numa_b) {
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common].bus_id == b[common].bus_id) ++common;
  if (common > 0 && a[common - 1].is_switch) {
    // NCCL counts the PCIe switches a transfer crosses: one (the shared one) is PIX, more is PXB.
    auto below = [common](const std::vector<PciAncestor>& p) {
      return std::count_if(p.begin() + static_cast<std::ptrdiff_t>(common), p.end(),
                           [](const PciAncestor& x) { return x.is_switch; });
    };
    return below(a) + below(b) == 0 ? PathType::pix : PathType::pxb;
  }
  if (common > 0) return PathType::phb;  // meet at a host bridge
  return numa_a == numa_b ? PathType::phb : PathType::sys;
}

namespace {

// NVLink shape and each GPU's NVLink peers (every other GPU behind NVSwitches).
std::vector<std::set<int>> nvlink_peers(const Topology& t, Analysis& a) {
  const size_t ng = t.gpus.size();
  std::map<std::string, int> position_of_bus;
  for (size_t i = 0; i < ng; ++i) position_of_bus[t.gpus[i].pci_bus_id] = static_cast<int>(i);
  std::vector<std::set<int>> peers(ng);
  bool any_link = false, all_switch = ng > 0;
  a.nvswitch = t.nvswitch_seen || !t.nvswitches.empty();
  for (size_t i = 0; i < ng; ++i) {
    const Gpu& g = t.gpus[i];
    bool to_switch = false;
    for (const auto& l : g.nvlinks) {
      any_link = true;
      if (l.remote == NvLinkRemote::nvswitch) to_switch = true;
      if (l.remote == NvLinkRemote::gpu) {
        auto it = position_of_bus.find(l.remote_bus_id);
        if (it != position_of_bus.end()) peers[i].insert(it->second);
      }
    }
    if (!to_switch) all_switch = false;
    a.nvlink_gbps.push_back(g.nvlink_links() * nvlink_link_gbps(g.sm));
  }
  if (any_link && all_switch) {
    a.nvlink_shape = NvLinkShape::nvswitch;
    a.nvswitch = true;
    for (size_t i = 0; i < ng; ++i)
      for (size_t j = 0; j < ng; ++j)
        if (i != j) peers[i].insert(static_cast<int>(j));
  } else if (any_link) {
    bool full = true;
    for (size_t i = 0; i < ng; ++i)
      if (peers[i].size() + 1 < ng) full = false;
    a.nvlink_shape = full ? NvLinkShape::all_to_all : NvLinkShape::partial;
  }

  return peers;
}

// Every GPU-NIC PCI path (PXN through an NVLink peer where the GPU's own path crosses the CPU), and each
// GPU's nearest NICs. Returns how many GPUs have each NIC among their nearest behind a PCI switch.
std::map<std::string, int> gpu_nic_paths(const Topology& t, const std::vector<std::set<int>>& peers,
                                         Analysis& a) {
  const size_t ng = t.gpus.size();
  a.nearest_nics.resize(ng);
  std::map<std::string, int> near_gpu_count;
  for (size_t i = 0; i < ng; ++i) {
    const Gpu& g = t.gpus[i];
    std::vector<GpuNicPath> row;
    for (const auto& n : t.nics) {
      GpuNicPath p;
      p.gpu = g.index;
      p.nic = n.name;
      p.type = pci_path_type(g.pci_path, g.numa_node, n.pci_path, n.numa_node);
      p.best = p.type;
      if (p.type == PathType::phb || p.type == PathType::sys) {
        for (int peer : peers[i]) {
          const Gpu& pg = t.gpus[static_cast<size_t>(peer)];
          const PathType via = pci_path_type(pg.pci_path, pg.numa_node, n.pci_path, n.numa_node);
          if (via == PathType::pix || via == PathType::pxb) {
            p.best = PathType::pxn;
            p.pxn_via = pg.index;
            break;
          }
        }
      }
      row.push_back(p);
    }
    if (!row.empty()) {
      const PathType nearest = std::min_element(row.begin(), row.end(), [](const auto& x, const auto& y) {
                                 return x.type < y.type;
                               })->type;
      for (const auto& p : row)
        if (p.type == nearest) a.nearest_nics[i].push_back(p.nic);
      if (nearest == PathType::pix || nearest == PathType::pxb)
        for (const auto& n : a.nearest_nics[i]) ++near_gpu_count[n];
    }
    a.paths.insert(a.paths.end(), row.begin(), row.end());
  }
  return near_gpu_count;
}

// Rail-aligned: every GPU has a NIC of its own behind its PCI switch.
void find_rails(const Topology& t, const std::map<std::string, int>& near_gpu_count, Analysis& a) {
  const size_t ng = t.gpus.size();
  a.rail_aligned = ng > 0 && !t.nics.empty();
  for (size_t i = 0; i < ng && a.rail_aligned; ++i) {
    bool own = false;
    for (const auto& p : a.paths)
      if (p.gpu == t.gpus[i].index && (p.type == PathType::pix || p.type == PathType::pxb)) own = true;
    if (!own) a.rail_aligned = false;
    for (const auto& n : a.nearest_nics[i])
      if (auto c = near_gpu_count.find(n); c != near_gpu_count.end() && c->second > 1) a.rail_aligned = false;
  }
  if (a.rail_aligned)
    for (size_t i = 0; i < ng; ++i) a.rails.push_back({t.gpus[i].index, a.nearest_nics[i]});
}

// NCCL_IB_HCA candidates: every active port; the rail NICs only (leaves out NICs no GPU is near, such as a
// storage NIC); one NIC per NUMA node. And whether NCCL_CROSS_NIC matters (more than one port).
void sweep_settings(const Topology& t, Analysis& a) {
  std::vector<std::pair<std::string, int>> all, rail_ports, per_numa;
  std::set<std::string> rail_nics;
  for (const auto& r : a.rails) rail_nics.insert(r.nics.begin(), r.nics.end());
  std::set<int> numa_seen;
  for (const auto& n : t.nics) {
    const auto ports = active_ports(n);
    if (ports.empty()) continue;
    for (const auto* p : ports) {
      all.emplace_back(n.name, p->port);
      if (rail_nics.count(n.name)) rail_ports.emplace_back(n.name, p->port);
    }
    if (numa_seen.insert(n.numa_node).second) per_numa.emplace_back(n.name, ports.front()->port);
  }
  for (const auto* set : {&all, &rail_ports, &per_numa}) {
    if (set->empty()) continue;
    if (set == &per_numa && numa_seen.size() < 2) continue;
    const std::string v = hca_value(*set);
    if (std::find(a.ib_hca_candidates.begin(), a.ib_hca_candidates.end(), v) == a.ib_hca_candidates.end())
      a.ib_hca_candidates.push_back(v);
  }
  // A skeleton file names NICs without ports (NCCL finds them at run time): each such NIC counts as one.
  const auto unprobed =
      std::count_if(t.nics.begin(), t.nics.end(), [](const Nic& n) { return n.ports.empty(); });
  a.sweep_cross_nic = all.size() + static_cast<size_t>(unprobed) > 1;
}

// The algorithms the node can run, in NCCL's order.
void sweep_algorithms(const Topology& t, Analysis& a) {
  const size_t ng = t.gpus.size();
  if (ng > 0) {
    using nccl::Algorithm;
    a.algorithms = {Algorithm::tree, Algorithm::ring};
    if (a.collnet.status != FeatureStatus::not_available) {
      a.algorithms.push_back(Algorithm::collnet_direct);
      a.algorithms.push_back(Algorithm::collnet_chain);
    }
    if (a.nvls.status == FeatureStatus::available) {
      a.algorithms.push_back(Algorithm::nvls);
      a.algorithms.push_back(Algorithm::nvls_tree);
    }
    // PAT runs with one GPU per node only.
    if (ng == 1) a.algorithms.push_back(Algorithm::pat);
  }
}

}  // namespace

Analysis analyze(const Topology& t) {
  Analysis a;
  const std::vector<std::set<int>> peers = nvlink_peers(t, a);
  find_rails(t, gpu_nic_paths(t, peers, a), a);
  a.nvls = nvls_feature(t, a.nvswitch);
  a.collnet = collnet_feature(t);
  a.gdr = gdr_feature(t);
  a.health = health_findings(t);
  a.fabric = choose_fabric_setup(t);
  sweep_settings(t, a);
  sweep_algorithms(t, a);
  return a;
}

}  // namespace autotune::topology
