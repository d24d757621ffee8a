#include "topology/output.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "topology/probe_json.hpp"

namespace autotune::topology {
namespace {

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// NCCL's spellings ("Tree", "NVLSTree"), as NCCL_ALGO and NCCL's logs write them.
std::vector<std::string> algorithm_names(const std::vector<nccl::Algorithm>& algorithms) {
  std::vector<std::string> out;
  for (const auto a : algorithms) out.emplace_back(nccl::nccl_name(a));
  return out;
}

nlohmann::json feature_json(const Feature& f) {
  return {{"status", std::string(status_name(f.status))}, {"evidence", f.evidence}};
}

void health_text(const Topology& t, const Analysis& a, std::ostringstream& out) {
  out << "\nhealth: " << node_status(a.health);
  if (!a.health.empty()) {
    const auto blocking = std::count_if(a.health.begin(), a.health.end(),
                                        [](const HealthFinding& f) { return f.severity == Severity::block; });
    out << ", " << a.health.size() << " finding(s), " << blocking << " blocking a calibration";
  }
  if (!t.health.read && !t.from_live_node) out << " (no health readings in this source)";
  out << "\n";
  for (const auto& h : a.health)
    out << "  " << pad(std::string(severity_name(h.severity)), 6) << h.message << "\n";
  if (t.health.dcgm && !t.health.dcgm->ran) out << "  dcgm: " << t.health.dcgm->why << "\n";
  if (t.health.read) {
    out << "fabric: "
        << (a.fabric.gid_index ? "NCCL_IB_GID_INDEX=" + std::to_string(*a.fabric.gid_index)
                               : std::string("NCCL_IB_GID_INDEX not set"))
        << " (" << a.fabric.gid_evidence << ")\n        "
        << (a.fabric.socket_ifname ? "NCCL_SOCKET_IFNAME=" + *a.fabric.socket_ifname
                                   : std::string("NCCL_SOCKET_IFNAME not set"))
        << " (" << a.fabric.socket_evidence << ")\n";
  }
}

}  // namespace

std::string to_text(const ProbeReport& r) {
  const Topology& t = r.topology;
  const Analysis& a = r.analysis;
  std::ostringstream out;
  out << "node: " << t.origin << ", " << t.gpus.size() << " GPUs, " << t.nics.size() << " NICs, "
      << t.numa_nodes << " NUMA nodes\n";
  for (const auto& g : t.gpus)
    out << "  GPU" << g.index << "  " << g.pci_bus_id << "  " << (g.name.empty() ? "(unnamed)" : g.name)
        << "  sm " << g.sm << "  NUMA " << g.numa_node << "  NVLinks " << g.nvlink_links() << "\n";
  for (const auto& n : t.nics) {
    out << "  " << pad(n.name, 8) << n.pci_bus_id << "  " << (n.model.empty() ? "(unknown model)" : n.model)
        << "  NUMA " << n.numa_node;
    for (const auto& p : n.ports)
      out << "  port " << p.port << " " << p.state << " " << p.link_layer << " " << num(p.speed_gbps)
          << " Gb/s";
    out << "\n";
  }
  // Say why nothing was seen right where a reader looks for the devices (the sources list has the detail).
  auto why_none = [&](const char* what, std::initializer_list<const char*> names) {
    out << "  no " << what << " seen";
    for (const char* name : names)
      for (const auto& s : t.sources)
        if (s.name == name && !s.available) out << "; " << name << ": " << s.detail;
    out << "\n";
  };
  if (t.gpus.empty()) why_none("GPUs", {"cuda", "nvml", "sysfs"});
  if (t.nics.empty()) why_none("NICs", {"ibverbs", "sysfs-infiniband"});
  if (!t.gpus.empty() && !t.nics.empty()) {
    out << "\nGPU x NIC (PIX: same PCIe switch, PXB: several switches, PHB: host bridge, SYS: across NUMA; "
           "* = PXN through an NVLink peer)\n"
        << pad("", 8);
    for (const auto& n : t.nics) out << pad(n.name, 9);
    out << "\n";
    for (const auto& g : t.gpus) {
      out << pad("GPU" + std::to_string(g.index), 8);
      for (const auto& p : a.paths)
        if (p.gpu == g.index)
          out << pad(std::string(path_name(p.type)) + (p.best == PathType::pxn ? "*" : ""), 9);
      out << "\n";
    }
  }
  out << "\nNVLink: " << shape_name(a.nvlink_shape) << (a.nvswitch ? " (NVSwitch)" : "");
  if (!a.nvlink_gbps.empty() && a.nvlink_gbps[0] > 0) out << ", " << num(a.nvlink_gbps[0]) << " GB/s per GPU";
  out << "\nrails: " << (a.rail_aligned ? "aligned (each GPU has its own PIX/PXB NIC)" : "not rail-aligned")
      << "\n";
  out << "\nNVLS:    " << status_name(a.nvls.status) << ": " << a.nvls.evidence << "\n";
  out << "CollNet: " << status_name(a.collnet.status) << ": " << a.collnet.evidence << "\n";
  out << "GDR:     " << status_name(a.gdr.status) << ": " << a.gdr.evidence << "\n";
  health_text(t, a, out);
  out << "\nsweep: algorithms";
  for (const auto al : a.algorithms) out << " " << nccl::nccl_name(al);
  out << "; NCCL_CROSS_NIC "
      << (a.sweep_cross_nic ? "worth sweeping" : "not worth sweeping (one usable NIC port or none)") << "\n";
  for (const auto& c : a.ib_hca_candidates) out << "  NCCL_IB_HCA=" << c << "\n";
  out << "\nsources:\n";
  for (const auto& s : t.sources)
    out << "  " << pad(s.name + "  ", 18) << (s.available ? "" : "not available: ") << s.detail << "\n";
  out << "\nfingerprint: " << r.fingerprint << "\n";
  return out.str();
}

nlohmann::json finding_json(const HealthFinding& f) {
  return {{"kind", f.kind},     {"severity", std::string(severity_name(f.severity))},
          {"device", f.device}, {"reading", f.reading},
          {"source", f.source}, {"message", f.message}};
}

std::string to_json(const ProbeReport& r) {
  const Topology& t = r.topology;
  const Analysis& a = r.analysis;
  nlohmann::json j;
  j["schema"] = 1;
  detail::write_topology_json(t, j);
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    j["gpus"][i]["nvlink_gbps"] = i < a.nvlink_gbps.size() ? a.nvlink_gbps[i] : 0.0;
    j["gpus"][i]["nearest_nics"] = i < a.nearest_nics.size() ? a.nearest_nics[i] : std::vector<std::string>{};
  }
  j["paths"] = nlohmann::json::array();
  for (const auto& p : a.paths) {
    nlohmann::json e = {{"gpu", p.gpu}, {"nic", p.nic}, {"type", std::string(path_name(p.type))}};
    if (p.best == PathType::pxn) e["pxn_via"] = p.pxn_via;
    j["paths"].push_back(e);
  }
  j["nvswitch"] = a.nvswitch;
  j["nvlink_shape"] = std::string(shape_name(a.nvlink_shape));
  j["rail_aligned"] = a.rail_aligned;
  j["rails"] = nlohmann::json::array();
  for (const auto& rail : a.rails) j["rails"].push_back({{"gpu", rail.gpu}, {"nics", rail.nics}});
  j["features"] = {
      {"nvls", feature_json(a.nvls)}, {"collnet", feature_json(a.collnet)}, {"gdr", feature_json(a.gdr)}};
  j["health"] = nlohmann::json::array();
  for (const auto& h : a.health) j["health"].push_back(finding_json(h));
  j["health_status"] = std::string(node_status(a.health));
  j["fabric"] = {{"gid_evidence", a.fabric.gid_evidence},
                 {"socket_evidence", a.fabric.socket_evidence},
                 {"env", a.fabric.env()}};
  if (a.fabric.gid_index) j["fabric"]["gid_index"] = *a.fabric.gid_index;
  if (a.fabric.socket_ifname) j["fabric"]["socket_ifname"] = *a.fabric.socket_ifname;
  if (a.fabric.nccl_default_interface)
    j["fabric"]["nccl_default_interface"] = *a.fabric.nccl_default_interface;
  j["sweep"] = {{"ib_hca_candidates", a.ib_hca_candidates},
                {"sweep_cross_nic", a.sweep_cross_nic},
                {"algorithms", algorithm_names(a.algorithms)}};
  j["fingerprint"] = r.fingerprint;
  return j.dump(2) + "\n";
}

namespace {

std::string hex(uint32_t v, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*x", digits, v);
  return std::string(text);
}

// A GPU's NVLinks as NCCL writes them: parallel links grouped per target, in the order first seen. A link to
// the CPU (POWER hosts) names no target NCCL reads (it takes the GPU's local CPU), so one whose peer is
// unknown is written without.
void add_nvlinks(pugi::xml_node gpu, const Gpu& g) {
  std::vector<std::tuple<std::string, NvLinkRemote, int>> grouped;
  for (const auto& l : g.nvlinks) {
    if (!l.up || (l.remote_bus_id.empty() && l.remote != NvLinkRemote::cpu)) continue;
    auto same = [&](const auto& e) {
      return std::get<0>(e) == l.remote_bus_id && std::get<1>(e) == l.remote;
    };
    auto it = std::find_if(grouped.begin(), grouped.end(), same);
    if (it == grouped.end()) it = grouped.insert(grouped.end(), {l.remote_bus_id, l.remote, 0});
    std::get<2>(*it) += l.count;
  }
  for (const auto& [target, remote, count] : grouped) {
    auto nv = gpu.append_child("nvlink");
    if (!target.empty()) nv.append_attribute("target") = target.c_str();
    nv.append_attribute("count") = count;
    // NCCL's classes: 0x068000 an NVSwitch, 0x068001 the CPU, a GPU's own class otherwise.
    nv.append_attribute("tclass") = remote == NvLinkRemote::nvswitch ? "0x068000"
                                    : remote == NvLinkRemote::cpu    ? "0x068001"
                                                                     : "0x030200";
  }
}

// NCCL's nesting, rebuilt: cpu per NUMA node > the PCI switches on each device's path > the device.
class NcclXml {
 public:
  explicit NcclXml(const Topology& t) {
    system_ = doc_.append_child("system");
    system_.append_attribute("version") = "1";
    std::set<int> numas;
    for (const auto& g : t.gpus) numas.insert(g.numa_node);
    for (const auto& n : t.nics) numas.insert(n.numa_node);
    // NUMA nodes without a GPU or NIC still count (they change what SYS paths cross): an empty cpu each.
    for (int numa = 0; static_cast<int>(numas.size()) < t.numa_nodes && numa < 4096; ++numa)
      numas.insert(numa);
    for (int numa : numas) {
      auto cpu = system_.append_child("cpu");
      cpu.append_attribute("numaid") = numa < 0 ? 0 : numa;
      if (!t.cpu_arch.empty()) cpu.append_attribute("arch") = t.cpu_arch.c_str();
      // NCCL refuses an x86 cpu with a vendor but no family and model ("Attribute familyid of node cpu not
      // found", real NCCL 2.29.7): without them, no vendor, which NCCL takes as an unknown x86 CPU.
      const bool family_known = t.cpu_family >= 0 && t.cpu_model >= 0;
      if (!t.cpu_vendor.empty() && (family_known || t.cpu_arch != "x86_64"))
        cpu.append_attribute("vendor") = t.cpu_vendor.c_str();
      if (family_known) {
        cpu.append_attribute("familyid") = t.cpu_family;
        cpu.append_attribute("modelid") = t.cpu_model;
      }
      cpus_[numa] = cpu;
    }
  }

  void add_gpu(const Gpu& g) {
    auto pci = parent_for(g.numa_node, g.pci_path).append_child("pci");
    pci.append_attribute("busid") = g.pci_bus_id.c_str();
    pci.append_attribute("class") = "0x030200";
    pci.append_attribute("vendor") = "0x10de";
    if (g.pci_device_id) pci.append_attribute("device") = hex(g.pci_device_id, 4).c_str();
    add_link(pci, g.link);
    auto gpu = pci.append_child("gpu");
    gpu.append_attribute("dev") = g.index;
    if (g.sm > 0) gpu.append_attribute("sm") = g.sm;
    add_nvlinks(gpu, g);
  }

  void add_nic(const Nic& n) {
    pugi::xml_node holder;
    if (n.pci_bus_id.empty()) {
      holder = parent_for(n.numa_node, n.pci_path);  // NCCL allows a nic straight under its cpu
    } else if (auto it = nic_pcis_.find(n.pci_bus_id); it != nic_pcis_.end()) {
      holder = it->second;
    } else {
      holder = parent_for(n.numa_node, n.pci_path).append_child("pci");
      holder.append_attribute("busid") = n.pci_bus_id.c_str();
      // 0x0207 is NCCL's (and PCI's) InfiniBand controller; readers take the link layer from it.
      const bool ib = std::any_of(n.ports.begin(), n.ports.end(),
                                  [](const NicPort& p) { return p.link_layer == "InfiniBand"; });
      holder.append_attribute("class") = ib ? "0x020700" : "0x020000";
      if (n.pci_vendor_id) holder.append_attribute("vendor") = hex(n.pci_vendor_id, 4).c_str();
      if (n.pci_device_id) holder.append_attribute("device") = hex(n.pci_device_id, 4).c_str();
      add_link(holder, n.link);
      nic_pcis_[n.pci_bus_id] = holder;
    }
    for (const auto& p : n.ports) {
      if (p.state != "ACTIVE") continue;  // NCCL lists usable ports only; a NIC without one stays a bare pci
      pugi::xml_node nic = holder.child("nic") ? holder.child("nic") : holder.append_child("nic");
      auto net = nic.append_child("net");
      net.append_attribute("name") = n.name.c_str();
      net.append_attribute("dev") = dev_++;
      net.append_attribute("speed") = static_cast<long long>(p.speed_gbps * 1000 + 0.5);
      net.append_attribute("port") = p.port;
      if (!p.guid.empty()) net.append_attribute("guid") = p.guid.c_str();
      net.append_attribute("gdr") = n.gdr ? 1 : 0;
      if (n.collnet) net.append_attribute("coll") = 1;
    }
  }

  std::string text() const {
    std::ostringstream out;
    doc_.save(out, "  ", pugi::format_indent | pugi::format_no_declaration);
    return out.str();
  }

 private:
  // A PCIe link as NCCL writes it ("16.0 GT/s PCIe"): NCCL reads the speed from a table of exactly those
  // strings and takes anything else, or none, as Gen3 (12 GB/s at x16), which changes its search.
  static void add_link(pugi::xml_node pci, const PcieLink& link) {
    if (link.speed_gts > 0) {
      char speed[32];
      std::snprintf(speed, sizeof speed, "%.1f GT/s PCIe", link.speed_gts);
      pci.append_attribute("link_speed") = speed;
    }
    if (link.width > 0) pci.append_attribute("link_width") = link.width;
  }

  // The element a device on `path` goes under: its cpu, or the last PCI switch on its path (made once).
  pugi::xml_node parent_for(int numa, const std::vector<PciAncestor>& path) {
    pugi::xml_node parent = cpus_[numa];
    for (const auto& p : path) {
      if (!p.is_switch || p.bus_id.find(':') == std::string::npos)
        continue;  // host bridges are the cpu itself
      auto it = switches_.find(p.bus_id);
      if (it == switches_.end()) {
        auto sw = parent.append_child("pci");
        sw.append_attribute("busid") = p.bus_id.c_str();
        sw.append_attribute("class") = "0x060400";
        add_link(sw, p.link);
        it = switches_.emplace(p.bus_id, sw).first;
      }
      parent = it->second;
    }
    return parent;
  }

  pugi::xml_document doc_;
  pugi::xml_node system_;
  std::map<int, pugi::xml_node> cpus_;
  std::map<std::string, pugi::xml_node> switches_;
  std::map<std::string, pugi::xml_node> nic_pcis_;  // one pci element per card, also for dual-port ones
  int dev_ = 0;
};

}  // namespace

std::string to_nccl_xml(const Topology& t) {
  NcclXml xml(t);
  for (const auto& g : t.gpus) xml.add_gpu(g);
  for (const auto& n : t.nics) xml.add_nic(n);
  return xml.text();
}

}  // namespace autotune::topology
