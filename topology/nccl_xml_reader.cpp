// Reads NCCL's own topology format (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE). NCCL nests devices the way the
// PCI tree does: cpu (a NUMA node) > pci switch ports > pci device > gpu | nic > net. Skeleton files stop at
// the pci level and rely on class codes, so every fact is taken from the class code first and the gpu/nic
// children only refine it.

#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "common/input_error.hpp"
#include "topology/pci_ids.hpp"
#include "topology/xml_sources.hpp"

namespace autotune::topology::detail {
namespace {

class NcclXmlReader {
 public:
  NcclXmlReader(const std::string& file, std::string_view text) : file_(file), text_(text) {}

  Topology read(const pugi::xml_node& system) {
    topo_.origin = file_;
    int cpus = 0;
    std::set<int> numa;
    for (const auto& cpu : system.children("cpu")) {
      ++cpus;
      const int numaid = optional_int(cpu, "numaid", -1);
      if (numaid >= 0) numa.insert(numaid);
      if (topo_.cpu_arch.empty()) topo_.cpu_arch = cpu.attribute("arch").value();
      if (topo_.cpu_vendor.empty()) topo_.cpu_vendor = cpu.attribute("vendor").value();
      if (topo_.cpu_family < 0) topo_.cpu_family = optional_int(cpu, "familyid", -1);
      if (topo_.cpu_model < 0) topo_.cpu_model = optional_int(cpu, "modelid", -1);
      walk(cpu, {}, numaid, "", false);
    }
    if (cpus == 0)
      throw InputError(
          file_, line(system),
          "expected at least one <cpu> element under <system>, found none (not an NCCL topology?)");
    topo_.numa_nodes = static_cast<int>(numa.size());
    finish_gpus();
    resolve_nvlinks();
    const bool full =
        std::any_of(topo_.gpus.begin(), topo_.gpus.end(), [](const Gpu& g) { return g.sm > 0; }) || saw_net_;
    topo_.sources.push_back({"file:" + file_, true,
                             std::string("NCCL topology XML (") + (full ? "full dump" : "skeleton") +
                                 "): " + std::to_string(topo_.gpus.size()) + " GPUs, " +
                                 std::to_string(topo_.nics.size()) + " NICs"});
    return std::move(topo_);
  }

 private:
  int line(const pugi::xml_node& node) const { return line_at(text_, node.offset_debug()); }

  [[noreturn]] void fail(const pugi::xml_node& node, const std::string& what) const {
    throw InputError(file_, line(node), what);
  }

  // NCCL's dumps write an attribute it could not read as empty (link_speed="" on a host bridge): absent and
  // empty both mean unknown. A value that is there must parse.
  int optional_int(const pugi::xml_node& node, const char* name, int fallback) const {
    const auto attr = node.attribute(name);
    if (!attr || !*attr.value()) return fallback;
    const std::string v = attr.value();
    char* end = nullptr;
    const long value = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0')
      fail(node, std::string("expected an integer in ") + name + "=, found \"" + v + "\"");
    return static_cast<int>(value);
  }

  double optional_double(const pugi::xml_node& node, const char* name) const {
    const auto attr = node.attribute(name);
    if (!attr || !*attr.value()) return 0.0;
    const std::string v = attr.value();
    char* end = nullptr;
    const double value = std::strtod(v.c_str(), &end);
    if (v.empty() || end == v.c_str())
      fail(node, std::string("expected a number in ") + name + "=, found \"" + v + "\"");
    return value;
  }

  uint32_t optional_hex(const pugi::xml_node& node, const char* name) const {
    const auto attr = node.attribute(name);
    if (!attr || !*attr.value()) return 0;
    uint32_t value = 0;
    if (!parse_hex(attr.value(), value))
      fail(node, std::string("expected a hex number in ") + name + "=, found \"" + attr.value() + "\"");
    return value;
  }

  std::string bus_id(const pugi::xml_node& node, const char* name) const {
    const auto attr = node.attribute(name);
    if (!attr)
      fail(node, std::string("expected a ") + name + "= attribute on <" + node.name() + ">, found none");
    std::string id = normalize_bus_id(attr.value());
    if (id.empty())
      fail(node, std::string("expected a PCI bus id like 0000:1b:00.0 in ") + name + "=, found \"" +
                     attr.value() + "\"");
    return id;
  }

  void walk(const pugi::xml_node& parent, const std::vector<PciAncestor>& path, int numa,
            const std::string& parent_bus_id, bool parent_bcm) {
    for (const auto& child : parent.children()) {
      if (child.type() != pugi::node_element) continue;
      const std::string name = child.name();
      if (name == "pci") {
        pci(child, path, numa, parent_bcm);
      } else if (name == "nic") {
        nic(child, path, numa, parent_bus_id, 0, 0);
      }
      // Other elements (NCCL adds new ones over time) carry nothing the model needs.
    }
  }

  void pci(const pugi::xml_node& node, const std::vector<PciAncestor>& path, int numa, bool parent_bcm) {
    const std::string id = bus_id(node, "busid");
    const uint32_t cls = optional_hex(node, "class");
    const uint32_t vendor = optional_hex(node, "vendor");
    const uint32_t device = optional_hex(node, "device");
    PcieLink link{optional_int(node, "link_width", 0), optional_double(node, "link_speed")};
    const auto gpu_node = node.child("gpu");
    const auto nic_node = node.child("nic");
    if (gpu_node || (is_gpu_class(cls) && !nic_node)) {
      gpu(gpu_node, id, device, link, path, numa);
    } else if (nic_node || is_nic_class(cls)) {
      if (nic_node) {
        const size_t first = topo_.nics.size();
        for (const auto& n : node.children("nic")) nic(n, path, numa, id, vendor, device, cls);
        for (size_t i = first; i < topo_.nics.size(); ++i) topo_.nics[i].link = link;
      } else {
        Nic nic;
        nic.name = "nic" + std::to_string(topo_.nics.size());  // a skeleton names no device; NCCL fills it in
        nic.pci_bus_id = id;
        nic.pci_vendor_id = vendor;
        nic.pci_device_id = device;
        nic.model = nic_model_for(vendor, device);
        nic.numa_node = numa;
        nic.pci_path = path;
        nic.link = link;
        topo_.nics.push_back(std::move(nic));
      }
    } else if (is_nvswitch_class(cls)) {
      add_nvswitch(id);
    } else {
      // Broadcom PEX Gen4/Gen5 switches appear as a switch of switches; NCCL flattens the second level into
      // the first, and so do we, so that path types match NCCL's.
      const bool bcm = vendor == 0x1000 && (device == 0xc010 || device == 0xc030);
      std::vector<PciAncestor> below = path;
      if (!(bcm && parent_bcm)) below.push_back({id, is_pci_bridge_class(cls), link});
      walk(node, below, numa, id, bcm);
    }
  }

  void gpu(const pugi::xml_node& gpu_node, const std::string& id, uint32_t device, const PcieLink& link,
           const std::vector<PciAncestor>& path, int numa) {
    Gpu g;
    g.index = gpu_node ? optional_int(gpu_node, "dev", -1) : -1;
    g.pci_bus_id = id;
    g.pci_device_id = device;
    g.name = gpu_name_for(device);
    g.sm = gpu_node ? optional_int(gpu_node, "sm", 0) : 0;
    if (g.sm == 0) g.sm = gpu_sm_for(device);
    g.numa_node = numa;
    g.pci_path = path;
    g.link = link;
    if (gpu_node) {
      int link_index = 0;
      for (const auto& nv : gpu_node.children("nvlink")) {
        NvLink l;
        l.link = link_index;
        l.count = optional_int(nv, "count", 1);
        if (l.count < 1) fail(nv, "expected count= of at least 1, found " + std::to_string(l.count));
        const uint32_t tclass = optional_hex(nv, "tclass");
        if (tclass == 0x068001)
          l.remote =
              NvLinkRemote::cpu;  // NCCL's class for a GPU's NVLink to its CPU, beside NVSwitch's 0x068000
        else if (is_nvswitch_class(tclass))
          l.remote = NvLinkRemote::nvswitch;
        else if (is_gpu_class(tclass))
          l.remote = NvLinkRemote::gpu;
        else if ((tclass >> 16) == 0x06)
          l.remote = NvLinkRemote::cpu;  // POWER hosts link GPUs to the CPU over NVLink (NCCL: 0x068001)
        // NCCL reads no target for a link to the CPU (it takes the GPU's local one): it may be absent there.
        if (l.remote == NvLinkRemote::nvswitch &&
            strcasecmp(nv.attribute("target").value(), kNvSwitchOffPciTree) == 0)
          l.remote_bus_id = kNvSwitchOffPciTree;  // NCCL's own name, no PCI bus id: kept as NCCL wrote it
        else if (l.remote != NvLinkRemote::cpu || nv.attribute("target"))
          l.remote_bus_id = bus_id(nv, "target");
        link_index += l.count;
        g.nvlinks.push_back(std::move(l));
      }
    }
    topo_.gpus.push_back(std::move(g));
  }

  void nic(const pugi::xml_node& node, const std::vector<PciAncestor>& path, int numa,
           const std::string& pci_id, uint32_t vendor, uint32_t device, uint32_t cls = 0) {
    // One Nic per <net>: NCCL and NCCL_IB_HCA address each verbs device (mlx5_0, mlx5_1) on its own, also
    // when two share one dual-port card.
    for (const auto& net : node.children("net")) {
      saw_net_ = true;
      Nic nic;
      const auto name = net.attribute("name");
      if (!name || !*name.value()) fail(net, "expected a name= attribute on <net>, found none");
      nic.name = name.value();
      nic.pci_bus_id = pci_id;
      nic.pci_vendor_id = vendor;
      nic.pci_device_id = device;
      nic.model = nic_model_for(vendor, device);
      nic.numa_node = numa;
      nic.pci_path = path;
      nic.collnet = optional_int(net, "coll", 0) != 0;
      nic.gdr = optional_int(net, "gdr", 0) != 0;
      NicPort port;
      port.port = optional_int(net, "port", 1);
      port.speed_gbps = optional_int(net, "speed", 0) / 1000.0;  // NCCL writes Mb/s
      port.guid = net.attribute("guid").value();
      // NCCL dumps only ports it could use, i.e. active ones; it does not record the link layer, except that
      // class 0x0207 is an InfiniBand controller.
      port.state = "ACTIVE";
      port.link_layer = (cls >> 8) == 0x0207 ? "InfiniBand" : "unknown";
      nic.ports.push_back(std::move(port));
      topo_.nics.push_back(std::move(nic));
    }
  }

  void add_nvswitch(const std::string& id) {
    topo_.nvswitch_seen = true;
    for (const auto& s : topo_.nvswitches)
      if (s.pci_bus_id == id) return;
    topo_.nvswitches.push_back({id});
  }

  // Full dumps number GPUs by CUDA device (dev=); skeletons only by their order in the file.
  void finish_gpus() {
    std::stable_sort(topo_.gpus.begin(), topo_.gpus.end(), [](const Gpu& a, const Gpu& b) {
      if ((a.index < 0) != (b.index < 0)) return a.index >= 0;
      return a.index < b.index;
    });
    std::set<int> seen;
    for (auto& g : topo_.gpus) {
      if (g.index >= 0 && !seen.insert(g.index).second)
        throw InputError(
            file_, 0, "expected unique <gpu dev=> numbers, found dev=" + std::to_string(g.index) + " twice");
    }
    int next = seen.empty() ? 0 : *seen.rbegin() + 1;
    for (auto& g : topo_.gpus)
      if (g.index < 0) g.index = next++;
  }

  void resolve_nvlinks() {
    for (auto& g : topo_.gpus) {
      for (auto& l : g.nvlinks) {
        if (l.remote == NvLinkRemote::unknown)
          for (const auto& peer : topo_.gpus)
            if (peer.pci_bus_id == l.remote_bus_id) l.remote = NvLinkRemote::gpu;
        if (l.remote == NvLinkRemote::nvswitch) add_nvswitch(l.remote_bus_id);
      }
    }
  }

  const std::string& file_;
  std::string_view text_;
  Topology topo_;
  bool saw_net_ = false;
};

}  // namespace

int line_at(std::string_view text, std::ptrdiff_t offset) {
  if (offset < 0) return 0;
  const auto end = std::min(static_cast<size_t>(offset), text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

Topology read_nccl_xml(const pugi::xml_node& system, const std::string& file, std::string_view text) {
  return NcclXmlReader(file, text).read(system);
}

}  // namespace autotune::topology::detail
