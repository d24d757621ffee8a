#include "topology/fabric_setup.hpp"

#include <algorithm>
#include <set>

namespace autotune::topology {
namespace {

// sysfs writes a GID as eight groups of four hex digits.
bool ipv4_mapped(const std::string& gid) {
  return gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
}
bool link_local(const std::string& gid) {
  return gid.rfind("fe80:0000:0000:0000:", 0) == 0;
}
bool is_v2(const Gid& g) {
  return g.type.rfind("RoCE v2", 0) == 0;
}
bool is_v1(const Gid& g) {
  return g.type.rfind("IB/RoCE v1", 0) == 0 || g.type.rfind("RoCE v1", 0) == 0;
}

std::vector<const NicPort*> active_roce_ports(const Topology& t, std::vector<std::string>* names = nullptr) {
  std::vector<const NicPort*> out;
  for (const auto& n : t.nics)
    for (const auto& p : n.ports)
      if (p.state == "ACTIVE" && p.link_layer == "Ethernet") {
        out.push_back(&p);
        if (names) names->push_back(n.name + " port " + std::to_string(p.port));
      }
  return out;
}

void choose_gid(const Topology& t, FabricSetup& f) {
  std::vector<std::string> names;
  const auto ports = active_roce_ports(t, &names);
  if (ports.empty()) {
    f.gid_evidence = "no active RoCE (Ethernet link layer) port: InfiniBand ports need no GID index";
    return;
  }
  std::optional<std::set<int>> common;
  for (size_t i = 0; i < ports.size(); ++i) {
    const auto indices = v2_ipv4_gid_indices(*ports[i]);
    if (indices.empty()) {
      f.gid_evidence = names[i] + " has no RoCE v2 GID with an IPv4 address";
      return;
    }
    std::set<int> here(indices.begin(), indices.end());
    if (!common) {
      common = here;
    } else {
      std::set<int> both;
      std::set_intersection(common->begin(), common->end(), here.begin(), here.end(),
                            std::inserter(both, both.begin()));
      common = both;
    }
  }
  if (common->empty()) {
    f.gid_evidence =
        "the RoCE v2 IPv4-mapped GID is at different indices on different ports; leave "
        "NCCL_IB_GID_INDEX unset (NCCL 2.21+ picks per port)";
    return;
  }
  f.gid_index = *common->begin();
  f.gid_evidence = "RoCE v2 with an IPv4-mapped address at index " + std::to_string(*f.gid_index) +
                   " on all " + std::to_string(ports.size()) + " active RoCE ports";
}

bool running(const NetInterface& n) {
  return n.operstate == "up" || n.operstate == "unknown";
}
bool has_address(const NetInterface& n) {
  return n.ipv4 || n.ipv6_global;
}
bool is_loopback(const NetInterface& n) {
  return n.type == 772 || n.name == "lo";
}

// NCCL's automatic choice (socket.cc, ncclFindInterfaces): interfaces named ib*, else any not named
// docker*, lo* or virbr*, each in interface order, up (IFF_RUNNING) and with an address.
std::optional<std::string> nccl_default(const std::vector<NetInterface>& all) {
  for (bool ib_pass : {true, false})
    for (const auto& n : all) {
      if (!running(n) || !has_address(n)) continue;
      const bool ib = n.name.rfind("ib", 0) == 0;
      const bool excluded =
          n.name.rfind("docker", 0) == 0 || n.name.rfind("lo", 0) == 0 || n.name.rfind("virbr", 0) == 0;
      if (ib_pass ? ib : !excluded) return n.name;
    }
  return std::nullopt;
}

void choose_socket(const Topology& t, FabricSetup& f) {
  std::vector<NetInterface> all = t.health.net_interfaces;
  std::stable_sort(all.begin(), all.end(),
                   [](const NetInterface& a, const NetInterface& b) { return a.ifindex < b.ifindex; });
  if (all.empty()) {
    f.socket_evidence = "no network interfaces read";
    return;
  }
  f.nccl_default_interface = nccl_default(all);
  const NetInterface* best = nullptr;
  auto rank = [](const NetInterface& n) { return n.name.rfind("ib", 0) == 0 ? 0 : n.default_route ? 1 : 2; };
  for (const auto& n : all) {
    if (!running(n) || !has_address(n) || is_loopback(n) || n.bridge || is_container_interface(n.name))
      continue;
    if (!best || rank(n) < rank(*best)) best = &n;
  }
  if (!best) {
    f.socket_evidence =
        "no interface is up with an address other than the loopback and container or VM bridges";
    return;
  }
  f.socket_ifname = "=" + best->name;
  f.socket_evidence = best->name + (rank(*best) == 0   ? " is IPoIB, NCCL's own first choice"
                                    : rank(*best) == 1 ? " holds the default route"
                                                       : " is the first interface up with an address");
}

}  // namespace

bool is_container_interface(const std::string& name) {
  for (const char* prefix : {"docker", "virbr", "cni", "veth", "br-", "flannel", "cali", "cilium", "weave",
                             "vxlan", "tunl", "kube", "podman", "lxc", "vnet"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::vector<int> v2_ipv4_gid_indices(const NicPort& port) {
  std::vector<int> out;
  for (const auto& g : port.health.gids)
    if (is_v2(g) && ipv4_mapped(g.address)) out.push_back(g.index);
  std::sort(out.begin(), out.end());
  return out;
}

RoceGids classify_roce_gids(const NicPort& port) {
  bool any_type = false, v2_routable = false, v1_routable = false;
  for (const auto& g : port.health.gids) {
    any_type = any_type || !g.type.empty();
    if (link_local(g.address)) continue;
    if (is_v2(g) && ipv4_mapped(g.address)) return RoceGids::v2_ipv4;
    v2_routable = v2_routable || is_v2(g);
    v1_routable = v1_routable || is_v1(g);
  }
  if (!any_type) return RoceGids::unknown;
  if (v2_routable) return RoceGids::ipv6_only;
  if (v1_routable) return RoceGids::v1_only;
  return RoceGids::link_local_only;
}

std::map<std::string, std::string> FabricSetup::env() const {
  std::map<std::string, std::string> out;
  if (gid_index) out["NCCL_IB_GID_INDEX"] = std::to_string(*gid_index);
  if (socket_ifname) out["NCCL_SOCKET_IFNAME"] = *socket_ifname;
  return out;
}

FabricSetup choose_fabric_setup(const Topology& t) {
  FabricSetup f;
  if (!t.health.read) {
    f.gid_evidence = f.socket_evidence =
        "health readings were not taken (probe reads them; files may lack them)";
    return f;
  }
  choose_gid(t, f);
  choose_socket(t, f);
  return f;
}

}  // namespace autotune::topology
