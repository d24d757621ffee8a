// The live probe: the PCI tree, GPUs and NICs from sysfs (what hwloc itself reads, so a recorded tree works
// the same), refined by the libraries where they answer: hwloc for NUMA and CPU facts, the CUDA driver for
// device order, names, SM versions and multicast, NVML for NVLink, verbs for port state and speed. Every
// source that does not answer is recorded with its reason; the probe never fails for a missing one.

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include "common/text.hpp"
#include "topology/live_health.hpp"
#include "topology/pci_ids.hpp"
#include "topology/reader.hpp"

namespace autotune::topology {
namespace {

uint32_t read_hex(const SystemReader& r, const std::string& path) {
  uint32_t v = 0;
  if (auto text = r.read(path)) parse_hex(std::string(trim(*text)), v);
  return v;
}

int read_int(const SystemReader& r, const std::string& path, int fallback) {
  if (auto text = r.read(path)) {
    char* end = nullptr;
    const std::string t(trim(*text));
    const long v = std::strtol(t.c_str(), &end, 10);
    if (!t.empty() && end != t.c_str()) return static_cast<int>(v);
  }
  return fallback;
}

double read_leading_double(const SystemReader& r, const std::string& path) {
  if (auto text = r.read(path))
    return std::strtod(text->c_str(), nullptr);  // "16.0 GT/s PCIe", "56 Gb/sec (4X FDR)"
  return 0.0;
}

struct PciFacts {
  std::string bus_id;
  uint32_t cls = 0, vendor = 0, device = 0;
  int numa = -1;
  std::vector<PciAncestor> path;
  PcieLink link, link_max;
};

bool is_bcm(uint32_t vendor, uint32_t device) {
  return vendor == 0x1000 && (device == 0xc010 || device == 0xc030);
}

// "devices/pci0000:80/0000:80:02.2/0000:82:00.0" -> host bridge, then each bridge above the device.
std::vector<PciAncestor> pci_path(const SystemReader& r, const std::string& device_path) {
  std::vector<PciAncestor> path;
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= device_path.size()) {
    const size_t slash = device_path.find('/', start);
    parts.push_back(
        device_path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  bool parent_bcm = false;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.rfind("pci", 0) == 0 && p.size() > 3) {
      path.push_back({"hostbridge-" + p.substr(3), false});
    } else if (!normalize_bus_id(p).empty() && p.find(':') != std::string::npos) {
      const std::string dir = "bus/pci/devices/" + p;
      const uint32_t vendor = read_hex(r, dir + "/vendor"), device = read_hex(r, dir + "/device");
      const bool bcm = is_bcm(vendor, device);
      // NCCL flattens Broadcom Gen4/Gen5 switch-of-switches; so do we (see nccl_xml_reader.cpp).
      if (!(bcm && parent_bcm))
        path.push_back({normalize_bus_id(p),
                        is_pci_bridge_class(read_hex(r, dir + "/class")),
                        {read_int(r, dir + "/current_link_width", 0),
                         read_leading_double(r, dir + "/current_link_speed")}});
      parent_bcm = bcm;
    }
  }
  return path;
}

PciFacts pci_facts(const SystemReader& r, const std::string& bdf) {
  PciFacts f;
  const std::string dir = "bus/pci/devices/" + bdf;
  f.bus_id = normalize_bus_id(bdf);
  f.cls = read_hex(r, dir + "/class");
  f.vendor = read_hex(r, dir + "/vendor");
  f.device = read_hex(r, dir + "/device");
  f.numa = read_int(r, dir + "/numa_node", -1);
  if (auto target = r.resolve(dir)) f.path = pci_path(r, *target);
  f.link = {read_int(r, dir + "/current_link_width", 0), read_leading_double(r, dir + "/current_link_speed")};
  f.link_max = {read_int(r, dir + "/max_link_width", 0), read_leading_double(r, dir + "/max_link_speed")};
  return f;
}

void read_pci(const SystemReader& r, Topology& t, std::map<std::string, PciFacts>& pci) {
  const auto devices = r.list("bus/pci/devices");
  if (devices.empty()) {
    t.sources.push_back({"sysfs", false, "no PCI devices under bus/pci/devices"});
    return;
  }
  for (const auto& bdf : devices) {
    if (normalize_bus_id(bdf).empty()) continue;
    PciFacts f = pci_facts(r, bdf);
    if (f.vendor == kVendorNvidia && is_gpu_class(f.cls)) {
      Gpu g;
      g.index = -1;
      g.pci_bus_id = f.bus_id;
      g.pci_device_id = f.device;
      g.name = gpu_name_for(f.device);
      g.sm = gpu_sm_for(f.device);
      g.numa_node = f.numa;
      g.pci_path = f.path;
      g.link = f.link;
      g.link_max = f.link_max;
      t.gpus.push_back(std::move(g));
    } else if (f.vendor == kVendorNvidia && is_nvswitch_class(f.cls)) {
      t.nvswitches.push_back({f.bus_id});
      t.nvswitch_seen = true;
    }
    pci[f.bus_id] = std::move(f);
  }
  int numa = 0;
  for (const auto& n : r.list("devices/system/node"))
    if (n.rfind("node", 0) == 0 && n.size() > 4 && std::isdigit(static_cast<unsigned char>(n[4]))) ++numa;
  t.numa_nodes = numa;
  t.sources.push_back({"sysfs", true,
                       std::to_string(pci.size()) + " PCI devices, " + std::to_string(t.gpus.size()) +
                           " NVIDIA GPUs, " + std::to_string(t.nvswitches.size()) + " NVSwitches, " +
                           std::to_string(numa) + " NUMA nodes"});
}

void read_nics(const SystemReader& r, Topology& t, const std::map<std::string, PciFacts>& pci) {
  const auto names = r.list("class/infiniband");
  std::vector<std::string> skipped;
  for (const auto& name : names) {
    const std::string dir = "class/infiniband/" + name;
    auto target = r.resolve(dir + "/device");
    const std::string bdf = target ? target->substr(target->rfind('/') + 1) : "";
    const std::string bus_id = normalize_bus_id(bdf);
    if (bus_id.empty() || bdf.find(':') == std::string::npos) {
      skipped.push_back(name);  // not a PCI device (a virtual or MIC transport)
      continue;
    }
    Nic nic;
    nic.name = name;
    nic.pci_bus_id = bus_id;
    auto it = pci.find(bus_id);
    const PciFacts f = it != pci.end() ? it->second : pci_facts(r, bdf);
    nic.pci_vendor_id = f.vendor;
    nic.pci_device_id = f.device;
    nic.model = nic_model_for(f.vendor, f.device);
    nic.numa_node = f.numa;
    nic.pci_path = f.path;
    nic.link = f.link;
    for (const auto& port_name : r.list(dir + "/ports")) {
      NicPort p;
      p.port = std::atoi(port_name.c_str());
      const std::string state(trim(r.read(dir + "/ports/" + port_name + "/state").value_or("unknown")));
      const auto colon = state.find(": ");
      p.state = colon == std::string::npos ? state : state.substr(colon + 2);  // "4: ACTIVE"
      p.link_layer = trim(r.read(dir + "/ports/" + port_name + "/link_layer").value_or("unknown"));
      p.speed_gbps = read_leading_double(r, dir + "/ports/" + port_name + "/rate");
      nic.ports.push_back(p);
    }
    t.nics.push_back(std::move(nic));
  }
  if (names.empty()) {
    t.sources.push_back(
        {"sysfs-infiniband", false, "class/infiniband is absent or empty (no RDMA driver loaded)"});
  } else {
    std::string detail = std::to_string(t.nics.size()) + " RDMA devices on PCI";
    if (!skipped.empty()) {
      detail += "; skipped (not PCI):";
      for (const auto& s : skipped) detail += " " + s;
    }
    t.sources.push_back({"sysfs-infiniband", true, detail});
  }
}

void apply_cuda(const SystemReader& r, Topology& t) {
  const auto cuda = r.cuda();
  if (!cuda.available) {
    t.sources.push_back({"cuda", false, cuda.why});
    return;
  }
  std::optional<bool> multicast, dma_buf;
  for (const auto& d : cuda.items) {
    auto it = std::find_if(t.gpus.begin(), t.gpus.end(),
                           [&](const Gpu& g) { return g.pci_bus_id == d.pci_bus_id; });
    if (it == t.gpus.end()) {
      Gpu g;
      g.pci_bus_id = d.pci_bus_id;
      t.gpus.push_back(g);
      it = t.gpus.end() - 1;
    }
    it->index = d.ordinal;
    if (!d.name.empty()) it->name = d.name;
    if (d.sm > 0) it->sm = d.sm;
    if (d.multicast.has_value()) multicast = multicast.value_or(true) && *d.multicast;
    if (d.dma_buf.has_value()) dma_buf = dma_buf.value_or(true) && *d.dma_buf;
  }
  t.cuda_multicast = multicast;
  t.health.cuda_dma_buf = dma_buf;
  t.sources.push_back({"cuda", true, std::to_string(cuda.items.size()) + " CUDA devices (driver API)"});
}

void apply_nvml(const SystemReader& r, Topology& t, const LiveOptions& options) {
  const auto nvml = r.nvml({options.health, options.counter_interval_ms});
  if (!nvml.available) {
    t.sources.push_back({"nvml", false, nvml.why});
    return;
  }
  int links = 0;
  for (const auto& ng : nvml.items) {
    auto it = std::find_if(t.gpus.begin(), t.gpus.end(),
                           [&](const Gpu& g) { return g.pci_bus_id == ng.pci_bus_id; });
    if (it == t.gpus.end()) continue;
    it->nvlinks.clear();
    it->health = ng.health;
    for (const auto& l : ng.links) {
      NvLink link;
      link.link = l.link;
      link.up = l.up;
      link.remote_bus_id = l.remote_bus_id;
      link.remote = l.remote == NvmlLink::Remote::gpu        ? NvLinkRemote::gpu
                    : l.remote == NvmlLink::Remote::nvswitch ? NvLinkRemote::nvswitch
                    : l.remote == NvmlLink::Remote::cpu      ? NvLinkRemote::cpu
                                                             : NvLinkRemote::unknown;
      link.errors = l.errors;
      if (link.remote == NvLinkRemote::nvswitch) t.nvswitch_seen = true;
      it->nvlinks.push_back(link);
      ++links;
    }
  }
  t.sources.push_back(
      {"nvml", true, std::to_string(nvml.items.size()) + " GPUs, " + std::to_string(links) + " NVLinks"});
}

void apply_verbs(const SystemReader& r, Topology& t) {
  const auto verbs = r.verbs();
  if (!verbs.available) {
    t.sources.push_back({"ibverbs", false, verbs.why});
    return;
  }
  for (const auto& d : verbs.items) {
    auto it = std::find_if(t.nics.begin(), t.nics.end(), [&](const Nic& n) { return n.name == d.name; });
    if (it == t.nics.end())
      continue;  // verbs sees it but sysfs does not place it on PCI: nothing to pair with
    it->ports.clear();
    for (const auto& p : d.ports) it->ports.push_back({p.port, p.state, p.link_layer, p.speed_gbps, "", {}});
    if (d.dma_buf.has_value()) t.health.rdma_dma_buf = t.health.rdma_dma_buf.value_or(true) && *d.dma_buf;
  }
  t.sources.push_back({"ibverbs", true, std::to_string(verbs.items.size()) + " verbs devices"});
}

void read_modules(const SystemReader& r, Topology& t) {
  const auto modules = r.read("proc:modules");
  if (!modules) {
    t.sources.push_back({"modules", false, "proc/modules could not be read"});
    return;
  }
  size_t start = 0;
  while (start < modules->size()) {
    const size_t end = modules->find('\n', start);
    const std::string line =
        modules->substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::string name = line.substr(0, line.find(' '));
    for (const char* wanted : {"nvidia", "nvidia_peermem", "nv_peer_mem", "ib_core", "mlx5_ib", "nvidia_fs"})
      if (name == wanted) t.loaded_modules.push_back(name);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  t.sources.push_back({"modules", true, "proc/modules read"});
}

}  // namespace

Topology probe_system(const SystemReader& r, const LiveOptions& options) {
  Topology t;
  t.origin = r.live() ? "live" : "recorded sysfs tree";
  t.from_live_node = r.live();
  std::map<std::string, PciFacts> pci;
  read_pci(r, t, pci);
  read_nics(r, t, pci);
  if (r.live()) {
    const HwlocSummary h = r.hwloc();
    if (h.available) {
      if (h.numa_nodes > 0) t.numa_nodes = h.numa_nodes;
      t.cpu_arch = h.cpu_arch;
      t.cpu_vendor = h.cpu_vendor;
      t.cpu_family = h.cpu_family;
      t.cpu_model = h.cpu_model;
      t.sources.push_back({"hwloc", true,
                           std::to_string(h.numa_nodes) + " NUMA nodes, " + std::to_string(h.pci_devices) +
                               " PCI devices (I/O kept)"});
    } else {
      t.sources.push_back({"hwloc", false, h.why});
    }
    apply_cuda(r, t);
    apply_nvml(r, t, options);
    apply_verbs(r, t);
    read_modules(r, t);
    t.net_plugins = r.collnet_plugins();
    t.sources.push_back({"net-plugins", !t.net_plugins.empty(),
                         t.net_plugins.empty()
                             ? "no libnccl-net plugin exporting ncclCollNetPlugin_v* could be loaded"
                             : std::to_string(t.net_plugins.size()) + " CollNet plugin(s)"});
  } else {
    for (const char* lib : {"hwloc", "cuda", "nvml", "ibverbs"})
      t.sources.push_back(
          {lib, false, "not asked: the libraries describe this machine, not the recorded tree"});
    read_modules(r, t);
  }
  // GPUs without a CUDA ordinal keep PCI order after those that have one.
  int next = 0;
  for (const auto& g : t.gpus) next = std::max(next, g.index + 1);
  for (auto& g : t.gpus)
    if (g.index < 0) g.index = next++;
  std::stable_sort(t.gpus.begin(), t.gpus.end(),
                   [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  if (options.health) detail::read_sysfs_health(r, t, options);
  return t;
}

}  // namespace autotune::topology
