#include "topology/hwloc_convert.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "topology/nvlink.hpp"
#include "topology/pci_ids.hpp"

namespace autotune::topology::detail {
namespace {

std::string bus_id_of(hwloc_obj_t obj) {
  char text[16];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", obj->attr->pcidev.domain, obj->attr->pcidev.bus,
                obj->attr->pcidev.dev, obj->attr->pcidev.func);
  return text;
}

bool is_io(hwloc_obj_t obj) {
  return obj->type == HWLOC_OBJ_BRIDGE || obj->type == HWLOC_OBJ_PCI_DEVICE ||
         obj->type == HWLOC_OBJ_OS_DEVICE;
}

// hwloc_get_common_ancestor_obj crashes on I/O objects in hwloc 2.9 (negative depths), so every walk up the
// tree here follows ->parent by hand.
int numa_of(hwloc_obj_t obj) {
  hwloc_obj_t o = obj;
  while (o && is_io(o)) o = o->parent;
  if (!o || !o->nodeset || hwloc_bitmap_weight(o->nodeset) != 1) return -1;
  return hwloc_bitmap_first(o->nodeset);
}

bool is_bcm_gen45_switch(hwloc_obj_t obj) {
  // Broadcom PEX Gen4/Gen5 switches show up as two levels of switches; NCCL flattens them into one, and so
  // do we, so that path types match what NCCL computes.
  return obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI &&
         obj->attr->pcidev.vendor_id == 0x1000 &&
         (obj->attr->pcidev.device_id == 0xc010 || obj->attr->pcidev.device_id == 0xc030);
}

std::vector<PciAncestor> path_of(hwloc_obj_t obj) {
  std::vector<PciAncestor> path;
  for (hwloc_obj_t o = obj->parent; o && o->type == HWLOC_OBJ_BRIDGE; o = o->parent) {
    if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      char text[32];
      std::snprintf(text, sizeof text, "hostbridge-%04x:%02x", o->attr->bridge.downstream.pci.domain,
                    o->attr->bridge.downstream.pci.secondary_bus);
      path.push_back({text, false});
    } else {
      if (is_bcm_gen45_switch(o) && o->parent && is_bcm_gen45_switch(o->parent)) continue;
      path.push_back({bus_id_of(o), true});
    }
  }
  std::reverse(path.begin(), path.end());
  return path;
}

const char* info(hwloc_obj_t obj, const char* name) {
  const char* v = hwloc_obj_get_info_by_name(obj, name);
  return v ? v : "";
}

// An NVIDIA GPU's PCI device: its ids, and from its OS devices the CUDA index (-1 when hwloc has none), the
// model and the compute capability; each OS device is remembered as this GPU's (gpu_of_osdev).
Gpu read_gpu(hwloc_obj_t pci, size_t position, std::map<hwloc_obj_t, size_t>& gpu_of_osdev) {
  const auto& a = pci->attr->pcidev;
  Gpu g;
  g.index = -1;
  g.pci_bus_id = bus_id_of(pci);
  g.pci_device_id = a.device_id;
  g.name = gpu_name_for(a.device_id);
  g.sm = gpu_sm_for(a.device_id);
  g.numa_node = numa_of(pci);
  g.pci_path = path_of(pci);
  for (hwloc_obj_t child = pci->io_first_child; child; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || !child->name) continue;
    unsigned n = 0;
    if (std::sscanf(child->name, "cuda%u", &n) == 1) g.index = static_cast<int>(n);
    if (g.name.empty() && *info(child, "GPUModel")) g.name = info(child, "GPUModel");
    if (g.sm == 0) {
      int major = 0, minor = 0;
      if (std::sscanf(info(child, "CUDAComputeCapability"), "%d.%d", &major, &minor) == 2)
        g.sm = major * 10 + minor;
    }
    gpu_of_osdev[child] = position;
  }
  if (g.name.empty()) g.name = info(pci, "PCIDevice");
  return g;
}

// The ports of an OpenFabrics device. hwloc records each port's state (verbs' numbering) and LID but not its
// speed or link layer: those come from verbs/sysfs on a live node.
Nic read_nic(hwloc_obj_t pci, hwloc_obj_t child) {
  const auto& a = pci->attr->pcidev;
  Nic nic;
  nic.name = child->name ? child->name : "";
  nic.pci_bus_id = bus_id_of(pci);
  nic.pci_vendor_id = a.vendor_id;
  nic.pci_device_id = a.device_id;
  nic.model = nic_model_for(a.vendor_id, a.device_id);
  nic.numa_node = numa_of(pci);
  nic.pci_path = path_of(pci);
  for (unsigned i = 0; i < child->infos_count; ++i) {
    // sscanf matches "Port1LID" against "Port%uState" up to the number, so the whole name must be used:
    // hwloc also records Port<N>LID and Port<N>LMC, which are the same port, not more of them.
    unsigned port = 0, state = 0;
    int used = 0;
    const char* name = child->infos[i].name;
    if (std::sscanf(name, "Port%uState%n", &port, &used) == 1 && used > 0 && name[used] == '\0' &&
        std::sscanf(child->infos[i].value, "%u", &state) == 1) {
      static const char* const kStates[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
      NicPort p;
      p.port = static_cast<int>(port);
      p.state = state < 6 ? kStates[state] : "unknown";
      p.link_layer = "unknown";
      nic.ports.push_back(p);
    }
  }
  return nic;
}

// NVLinkBandwidth: a matrix over GPU OS devices (and, on POWER, CPU packages); a non-zero off-diagonal entry
// is an NVLink connection. hwloc only stores bandwidth, so the link count is bandwidth / per-link rate.
void read_nvlinks(hwloc_topology_t topology, const std::map<hwloc_obj_t, size_t>& gpu_of_osdev,
                  Topology& out) {
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_name(topology, "NVLinkBandwidth", &nr, &dist, 0) == 0 && nr == 1 && dist) {
    const unsigned n = dist->nbobjs;
    for (unsigned i = 0; i < n; ++i) {
      auto it = gpu_of_osdev.find(dist->objs[i]);
      if (it == gpu_of_osdev.end()) continue;
      Gpu& g = out.gpus[it->second];
      g.nvlinks.clear();
      int link = 0;
      for (unsigned j = 0; j < n; ++j) {
        const uint64_t bw = dist->values[i * n + j];
        if (i == j || bw == 0) continue;
        NvLink l;
        l.link = link++;
        auto peer = gpu_of_osdev.find(dist->objs[j]);
        if (peer != gpu_of_osdev.end()) {
          l.remote = NvLinkRemote::gpu;
          l.remote_bus_id = out.gpus[peer->second].pci_bus_id;
        } else if (dist->objs[j]->type == HWLOC_OBJ_PACKAGE) {
          l.remote = NvLinkRemote::cpu;
        } else if (dist->objs[j]->type == HWLOC_OBJ_PCI_DEVICE) {
          l.remote = NvLinkRemote::nvswitch;
          l.remote_bus_id = bus_id_of(dist->objs[j]);
          out.nvswitch_seen = true;
        }
        // hwloc's NVLinkBandwidth is in MB/s; links per peer from the per-link rate of the GPU generation.
        const double per_link_mbps = nvlink_link_gbps(g.sm) * 1000.0;
        l.count = per_link_mbps > 0
                      ? std::max(1, static_cast<int>(static_cast<double>(bw) / per_link_mbps + 0.5))
                      : 1;
        g.nvlinks.push_back(l);
      }
    }
    hwloc_distances_release(topology, dist);
  }
}

// A number hwloc records as text ("CPUFamilyNumber"); -1 when absent or not a number.
int info_int(hwloc_obj_t obj, const char* name) {
  int v = -1;
  return std::sscanf(info(obj, name), "%d", &v) == 1 ? v : -1;
}

}  // namespace

void fill_from_hwloc(hwloc_topology_t topology, Topology& out) {
  out.numa_nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  if (hwloc_obj_t root = hwloc_get_root_obj(topology)) {
    out.cpu_arch = info(root, "Architecture");
    if (hwloc_obj_t pkg = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0)) {
      out.cpu_vendor = info(pkg, "CPUVendor");
      out.cpu_family = info_int(pkg, "CPUFamilyNumber");
      out.cpu_model = info_int(pkg, "CPUModelNumber");
    }
  }
  std::map<hwloc_obj_t, size_t> gpu_of_osdev;  // nvml/cuda OS device -> index into out.gpus
  std::vector<size_t> unnumbered;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topology, nullptr); pci;
       pci = hwloc_get_next_pcidev(topology, pci)) {
    const auto& a = pci->attr->pcidev;
    const uint32_t cls = static_cast<uint32_t>(a.class_id) << 8;
    if (a.vendor_id == kVendorNvidia && is_nvswitch_class(cls)) {
      out.nvswitches.push_back({bus_id_of(pci)});
      out.nvswitch_seen = true;
    } else if (a.vendor_id == kVendorNvidia && is_gpu_class(cls)) {
      Gpu g = read_gpu(pci, out.gpus.size(), gpu_of_osdev);
      if (g.index < 0) unnumbered.push_back(out.gpus.size());
      out.gpus.push_back(std::move(g));
    } else {
      for (hwloc_obj_t child = pci->io_first_child; child; child = child->next_sibling)
        if (child->type == HWLOC_OBJ_OS_DEVICE && child->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
          out.nics.push_back(read_nic(pci, child));
    }
  }
  // CUDA numbering where hwloc knows it; the others follow in PCI order after the highest known index.
  int next = 0;
  for (const auto& g : out.gpus) next = std::max(next, g.index + 1);
  for (size_t i : unnumbered) out.gpus[i].index = next++;
  read_nvlinks(topology, gpu_of_osdev, out);
  std::sort(out.gpus.begin(), out.gpus.end(), [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
}

}  // namespace autotune::topology::detail
