// The fabric set-up the probe names (NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME) and the readings behind it,
// on the recorded RoCE tree (tests/topology/fixtures/sysfs-roce, see health/make_sysfs_roce.py) and on
// hand-made interface lists; ACS from raw configuration space.

#include <catch2/catch.hpp>

#include "test_helpers.hpp"
#include "topology/analysis.hpp"
#include "topology/fabric_setup.hpp"
#include "topology/pci_acs.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;

namespace {

Topology roce_node() {
  LiveOptions o;
  o.sysfs_root = test::own_fixture("sysfs-roce");
  o.health = true;
  return probe_live(o);
}

NetInterface up(const std::string& name, int ifindex, bool default_route = false) {
  NetInterface n;
  n.name = name;
  n.operstate = "up";
  n.ifindex = ifindex;
  n.type = 1;
  n.physical = true;
  n.ipv4 = true;
  n.default_route = default_route;
  return n;
}

FabricSetup socket_choice(std::vector<NetInterface> interfaces) {
  Topology t;
  t.health.read = true;
  t.health.net_interfaces = std::move(interfaces);
  return choose_fabric_setup(t);
}

std::string config_with(std::initializer_list<std::pair<uint16_t, uint16_t>> caps) {
  // Extended capabilities chained from 0x100, 0x20 apart; each {id, second dword's upper half}.
  std::string c(4096, '\0');
  size_t at = 0x100;
  size_t i = 0;
  for (const auto& [id, control] : caps) {
    const size_t next = ++i < caps.size() ? at + 0x20 : 0;
    const uint32_t header = id | (1u << 16) | static_cast<uint32_t>(next << 20);
    for (int b = 0; b < 4; ++b) c[at + b] = static_cast<char>((header >> (8 * b)) & 0xff);
    c[at + 6] = static_cast<char>(control & 0xff);
    c[at + 7] = static_cast<char>(control >> 8);
    at = next;
  }
  return c;
}

}  // namespace

TEST_CASE("health: RoCE sysfs tree with v1, v2, IPv6 and IPv4-mapped GIDs gives NCCL_IB_GID_INDEX=3",
          "[health][fabric]") {
  const Topology t = roce_node();
  REQUIRE(t.nics.size() == 2);
  const NicPort& p = t.nics[0].ports.at(0);
  CHECK(p.link_layer == "Ethernet");
  REQUIRE(p.health.gids.size() == 6);  // the two all-zero entries are not configured
  CHECK(p.health.gids[3].address == "0000:0000:0000:0000:0000:ffff:0a00:0001");
  CHECK(p.health.gids[3].type == "RoCE v2");
  CHECK(p.health.gids[3].netdev == "ens1np0");
  CHECK(p.health.gids[2].type == "IB/RoCE v1");
  CHECK(classify_roce_gids(p) == RoceGids::v2_ipv4);
  CHECK(v2_ipv4_gid_indices(p) == std::vector<int>{3});
  const Analysis a = analyze(t);
  REQUIRE(a.fabric.gid_index);
  CHECK(*a.fabric.gid_index == 3);
  CHECK(a.fabric.gid_evidence == "RoCE v2 with an IPv4-mapped address at index 3 on all 2 active RoCE ports");
  CHECK(a.health.empty());
}

TEST_CASE("health: RoCE sysfs tree's interfaces, counters, ACS and peer memory are read",
          "[health][fabric]") {
  const Topology t = roce_node();
  CHECK(t.health.read);
  CHECK(t.health.counter_interval_ms == 0);  // a recorded tree: no NVML counters sampled
  CHECK(t.nics[1].ports[0].health.counters.at("symbol_error") == 0);
  CHECK(t.nics[1].ports[0].health.counters.size() == 9);
  REQUIRE(t.health.pci_bridges.size() == 4);  // two root ports, two switch ports
  for (const auto& b : t.health.pci_bridges) CHECK(b.acs_control == std::optional<uint16_t>(0));
  CHECK(t.health.peer_memory == std::vector<std::string>{"module/nvidia_peermem/version"});
  std::vector<std::string> names;
  for (const auto& n : t.health.net_interfaces) names.push_back(n.name);
  CHECK(names == std::vector<std::string>{"lo", "eth0", "ens1np0", "ens2np0", "docker0", "cni0", "virbr0"});
  const auto& eth0 = t.health.net_interfaces[1];
  CHECK(eth0.default_route);
  CHECK(eth0.physical);
  CHECK(t.health.net_interfaces[4].bridge);
  CHECK(t.health.net_interfaces[2].ipv6_global);
  const FabricSetup f = choose_fabric_setup(t);
  CHECK(f.socket_ifname == std::optional<std::string>("=eth0"));
  CHECK(f.nccl_default_interface == std::optional<std::string>("eth0"));
}

TEST_CASE("health: the socket interface is never the loopback or a container bridge", "[health][fabric]") {
  NetInterface lo = up("lo", 1);
  lo.type = 772;
  lo.operstate = "unknown";
  NetInterface docker = up("docker0", 2);
  docker.bridge = true;
  docker.physical = false;
  NetInterface cni = up("cni0", 3);
  cni.physical = false;
  FabricSetup f = socket_choice({lo, docker, cni});
  CHECK_FALSE(f.socket_ifname);
  CHECK(f.nccl_default_interface == std::optional<std::string>("cni0"));  // what NCCL would do by itself
  // IPoIB first, as NCCL itself prefers ib*; then the default route; a bond without a device is fine.
  NetInterface bond = up("bond0", 9, true);
  bond.physical = false;
  CHECK(socket_choice({lo, docker, up("eth0", 4), bond}).socket_ifname ==
        std::optional<std::string>("=bond0"));
  CHECK(socket_choice({lo, up("eth0", 4, true), up("ib0", 7)}).socket_ifname ==
        std::optional<std::string>("=ib0"));
  NetInterface down = up("ib0", 7);
  down.operstate = "down";
  CHECK(socket_choice({lo, up("eth0", 4), down}).socket_ifname == std::optional<std::string>("=eth0"));
  CHECK(is_container_interface("veth1a2b3c"));
  CHECK(is_container_interface("br-0123456789ab"));
  CHECK_FALSE(is_container_interface("ens1f0np0"));
}

TEST_CASE("health: ACS control is read from the extended capability list", "[health][fabric]") {
  // AER (0x0001) first, then ACS (0x000d) with ReqRedir + CmpltRedir.
  const AcsReading r = read_acs_control(config_with({{0x0001, 0}, {0x000d, 0x000c}}));
  REQUIRE(r.control);
  CHECK(*r.control == 0x000c);
  CHECK((*r.control & kAcsRedirectBits) != 0);
  CHECK(acs_control_names(*r.control) == "ReqRedir+ CmpltRedir+");
  CHECK(read_acs_control(config_with({{0x0001, 0}})).why == "no ACS capability");
  CHECK(read_acs_control(std::string(64, '\0')).why.find("needs root") != std::string::npos);
  CHECK(acs_control_names(0) == "none");
  CHECK((0x0001 & kAcsRedirectBits) == 0);  // source validation alone redirects nothing
}
