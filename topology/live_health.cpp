#include "topology/live_health.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "common/text.hpp"
#include "topology/pci_acs.hpp"
#include "topology/pci_ids.hpp"

namespace autotune::topology::detail {
namespace {

std::optional<uint64_t> read_u64(const SystemReader& r, const std::string& path) {
  const auto text = r.read(path);
  if (!text) return std::nullopt;
  const std::string t(trim(*text));
  char* end = nullptr;
  const unsigned long long v = std::strtoull(t.c_str(), &end, 0);
  if (t.empty() || *end != '\0') return std::nullopt;
  return v;
}

bool unconfigured(const std::string& gid) {
  return gid.find_first_not_of("0:") == std::string::npos;
}

PortHealth port_health(const SystemReader& r, const std::string& port_dir, bool ethernet) {
  PortHealth h;
  for (const auto& name : r.list(port_dir + "/counters"))
    if (auto v = read_u64(r, port_dir + "/counters/" + name)) h.counters[name] = *v;
  if (!ethernet) return h;  // InfiniBand ports use GID 0 (or the routable FLID one): no choice to make
  for (const auto& index : r.list(port_dir + "/gids")) {
    const std::string gid(trim(r.read(port_dir + "/gids/" + index).value_or("")));
    if (gid.empty() || unconfigured(gid)) continue;
    Gid g;
    g.index = std::atoi(index.c_str());
    g.address = gid;
    // Reading the type of an entry the kernel does not map (containers) fails: leave it unknown.
    g.type = trim(r.read(port_dir + "/gid_attrs/types/" + index).value_or(""));
    g.netdev = trim(r.read(port_dir + "/gid_attrs/ndevs/" + index).value_or(""));
    h.gids.push_back(std::move(g));
  }
  return h;
}

// proc/net/route: "Iface Destination Gateway Flags ...", hex destinations; 00000000 is the default route.
void read_routes(const SystemReader& r, std::map<std::string, NetInterface>& by_name) {
  std::istringstream in(r.read("proc:net/route").value_or(""));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string iface, destination;
    if (!(fields >> iface >> destination)) continue;
    auto it = by_name.find(iface);
    if (it == by_name.end()) continue;
    it->second.ipv4 = true;
    if (destination == "00000000") it->second.default_route = true;
  }
}

// proc/net/if_inet6: "address ifindex prefixlen scope flags name"; scope 00 is global.
void read_ipv6(const SystemReader& r, std::map<std::string, NetInterface>& by_name) {
  std::istringstream in(r.read("proc:net/if_inet6").value_or(""));
  std::string address, ifindex, prefix, scope, flags, name;
  while (in >> address >> ifindex >> prefix >> scope >> flags >> name) {
    auto it = by_name.find(name);
    if (it != by_name.end() && scope == "00") it->second.ipv6_global = true;
  }
}

std::vector<NetInterface> net_interfaces(const SystemReader& r) {
  std::map<std::string, NetInterface> by_name;
  for (const auto& name : r.list("class/net")) {
    const std::string dir = "class/net/" + name;
    NetInterface n;
    n.name = name;
    n.operstate = trim(r.read(dir + "/operstate").value_or("unknown"));
    n.ifindex = static_cast<int>(read_u64(r, dir + "/ifindex").value_or(0));
    n.type = static_cast<int>(read_u64(r, dir + "/type").value_or(0));
    n.physical = r.resolve(dir + "/device").has_value();
    n.bridge = !r.list(dir + "/bridge").empty();
    by_name[name] = n;
  }
  read_routes(r, by_name);
  read_ipv6(r, by_name);
  std::vector<NetInterface> out;
  for (auto& [name, n] : by_name) out.push_back(std::move(n));
  std::sort(out.begin(), out.end(), [](const NetInterface& a, const NetInterface& b) {
    return a.ifindex != b.ifindex ? a.ifindex < b.ifindex : a.name < b.name;
  });
  return out;
}

// The PCIe bridges (root and switch ports) on any GPU's or NIC's path: where ACS redirection would send their
// traffic up.
std::vector<PciBridge> pci_bridges(const SystemReader& r, const Topology& t) {
  std::set<std::string> ids;
  auto add = [&](const std::vector<PciAncestor>& path) {
    for (const auto& p : path)
      if (p.is_switch && !normalize_bus_id(p.bus_id).empty()) ids.insert(p.bus_id);
  };
  for (const auto& g : t.gpus) add(g.pci_path);
  for (const auto& n : t.nics) add(n.pci_path);
  std::vector<PciBridge> out;
  for (const auto& id : ids) {
    const AcsReading acs = read_acs_control(r.read("bus/pci/devices/" + id + "/config").value_or(""));
    out.push_back({id, acs.control, acs.why});
  }
  return out;
}

}  // namespace

void read_sysfs_health(const SystemReader& r, Topology& t, const LiveOptions& options) {
  t.health.read = true;
  t.health.counter_interval_ms = r.live() ? options.counter_interval_ms : 0;
  int counters = 0, gids = 0;
  for (auto& nic : t.nics)
    for (auto& port : nic.ports) {
      const std::string dir = "class/infiniband/" + nic.name + "/ports/" + std::to_string(port.port);
      port.health = port_health(r, dir, port.link_layer == "Ethernet");
      counters += static_cast<int>(port.health.counters.size());
      gids += static_cast<int>(port.health.gids.size());
    }
  t.health.net_interfaces = net_interfaces(r);
  t.health.pci_bridges = pci_bridges(r, t);
  // The files NCCL checks for a peer-memory client (net_ib.cc): nv_peer_mem, its nc variant, nvidia_peermem.
  for (const char* path : {"kernel/mm/memory_peers/nv_mem/version",
                           "kernel/mm/memory_peers/nv_mem_nc/version", "module/nvidia_peermem/version"})
    if (r.read(path)) t.health.peer_memory.push_back(path);
  int acs = 0;
  std::string unread;
  for (const auto& b : t.health.pci_bridges) {
    acs += b.acs_control.has_value();
    if (!b.acs_control && unread.empty()) unread = "; not read on " + b.bus_id + ": " + b.why;
  }
  t.sources.push_back({"health", true,
                       std::to_string(counters) + " NIC port counters, " + std::to_string(gids) + " GIDs, " +
                           std::to_string(t.health.net_interfaces.size()) +
                           " network interfaces, ACS read on " + std::to_string(acs) + " of " +
                           std::to_string(t.health.pci_bridges.size()) + " PCIe bridge ports"});
}

}  // namespace autotune::topology::detail
