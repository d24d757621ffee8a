// Findings about the network side: NIC port state and rate, InfiniBand port error counters, RoCE GID
// tables, the socket interface, ACS on the PCIe switches, GPUDirect RDMA.

#include <map>

#include "topology/fabric_setup.hpp"
#include "topology/health_detail.hpp"
#include "topology/pci_acs.hpp"
#include "topology/pci_ids.hpp"

namespace autotune::topology::detail {
namespace {

// infiniband-diags' ibcheckerrs defaults, by sysfs counter name.
struct CounterLimit {
  const char* counter;
  uint64_t threshold;
  bool link;  // a physical-link counter (ib_link_errors) rather than a receive/transmit one
};
constexpr CounterLimit kCounterLimits[] = {
    {"symbol_error", 10, true},
    {"link_error_recovery", 10, true},
    {"link_downed", 10, true},
    {"local_link_integrity_errors", 10, true},
    {"port_rcv_errors", 10, false},
    {"excessive_buffer_overrun_errors", 10, false},
    {"port_rcv_remote_physical_errors", 100, false},
    {"port_rcv_switch_relay_errors", 100, false},
    {"port_xmit_discards", 100, false},
    {"port_xmit_constraint_errors", 100, false},
    {"port_rcv_constraint_errors", 100, false},
    {"VL15_dropped", 100, false},
};

std::string port_name(const Nic& n, const NicPort& p) {
  return n.name + " port " + std::to_string(p.port);
}

void port_state(const Topology& t, const Nic& n, FindingSink& sink) {
  bool any_active = false, all_known = !n.ports.empty();
  std::string states;
  for (const auto& p : n.ports) {
    any_active = any_active || p.state == "ACTIVE";
    all_known = all_known && p.state != "unknown";
    states += (states.empty() ? "" : ", ") + std::string("port ") + std::to_string(p.port) + " " + p.state;
  }
  if (!any_active && all_known) {
    sink.add("nic_not_active", n.name, states, tree_source(t),
             n.name + " has no ACTIVE port (" + states + "): cable, switch port or subnet manager");
    return;
  }
  for (const auto& p : n.ports)
    if (p.state != "ACTIVE" && p.state != "unknown")
      sink.add(
          "nic_port_not_active", port_name(n, p), "state " + p.state, tree_source(t),
          port_name(n, p) + " is " + p.state + " (expected ACTIVE) while another port of " + n.name + " is");
}

void port_rates(const Topology& t, FindingSink& sink) {
  std::map<std::string, double> fastest;  // per model, over active ports
  for (const auto& n : t.nics)
    for (const auto& p : n.ports)
      if (p.state == "ACTIVE") fastest[n.model] = std::max(fastest[n.model], p.speed_gbps);
  for (const auto& n : t.nics)
    for (const auto& p : n.ports)
      if (p.state == "ACTIVE" && p.speed_gbps > 0 && p.speed_gbps + 0.01 < fastest[n.model])
        sink.add("nic_rate_degraded", port_name(n, p),
                 format_number(p.speed_gbps) + " Gb/s, other " + (n.model.empty() ? "NIC" : n.model) +
                     " ports " + format_number(fastest[n.model]) + " Gb/s",
                 tree_source(t),
                 port_name(n, p) + " trained at " + format_number(p.speed_gbps) + " Gb/s, its peers at " +
                     format_number(fastest[n.model]) + " Gb/s: check the cable and the switch port");
  for (const auto& [model, speed] : fastest) {
    const double max = nic_max_gbps_for(model);
    if (max <= 0 || speed <= 0 || speed + 0.01 >= max) continue;
    std::string names;
    for (const auto& n : t.nics)
      if (n.model == model) names += (names.empty() ? "" : ", ") + n.name;
    sink.add("nic_rate_below_max", model + " (" + names + ")",
             "fastest port " + format_number(speed) + " Gb/s, " + model + " runs up to " +
                 format_number(max) + " Gb/s",
             tree_source(t),
             "every " + model + " port runs at " + format_number(speed) + " Gb/s or less, the card does " +
                 format_number(max) + ": the fabric, cables or firmware settings limit it");
  }
}

void port_counters(const Nic& n, const NicPort& p, FindingSink& sink) {
  std::string link, receive;
  for (const auto& limit : kCounterLimits) {
    auto it = p.health.counters.find(limit.counter);
    if (it == p.health.counters.end() || it->second < limit.threshold) continue;
    std::string& out = limit.link ? link : receive;
    out += (out.empty() ? "" : ", ") + std::string(limit.counter) + " " + std::to_string(it->second) +
           " (>= " + std::to_string(limit.threshold) + ")";
  }
  if (!link.empty())
    sink.add("ib_link_errors", port_name(n, p), link, "sysfs",
             port_name(n, p) + " link errors " + link +
                 ": check the cable and transceiver, then clear the counters");
  if (!receive.empty())
    sink.add("ib_receive_errors", port_name(n, p), receive, "sysfs",
             port_name(n, p) + " packet errors " + receive + ": check the link and the fabric's congestion");
}

void roce_gids(const Topology& t, FindingSink& sink) {
  std::string indices;
  bool all_usable = true, any = false;
  for (const auto& n : t.nics)
    for (const auto& p : n.ports) {
      if (p.state != "ACTIVE" || p.link_layer != "Ethernet") continue;
      any = true;
      const RoceGids c = classify_roce_gids(p);
      const std::string dev = port_name(n, p);
      if (c == RoceGids::v1_only)
        sink.add("roce_gid_v1_only", dev, "routable GIDs are RoCE v1 only", "sysfs",
                 dev + " offers only RoCE v1 GIDs (not routable across subnets): enable RoCE v2 on the NIC");
      else if (c == RoceGids::ipv6_only)
        sink.add("roce_gid_ipv6_only", dev, "RoCE v2 GIDs are IPv6 only", "sysfs",
                 dev +
                     " has RoCE v2 GIDs for IPv6 only: give its interface an IPv4 address or set "
                     "NCCL_IB_ADDR_FAMILY=AF_INET6");
      else if (c == RoceGids::link_local_only)
        sink.add("roce_gid_link_local_only", dev, "only link-local (fe80::) GIDs", "sysfs",
                 dev + " has only link-local GIDs: its interface has no IP address");
      all_usable = all_usable && c == RoceGids::v2_ipv4;
      const auto idx = v2_ipv4_gid_indices(p);
      if (!idx.empty()) indices += (indices.empty() ? "" : "; ") + dev + ": " + std::to_string(idx.front());
    }
  if (any && all_usable && !choose_fabric_setup(t).gid_index)
    sink.add(
        "roce_gid_index_differs", "node", "RoCE v2 IPv4 GID index " + indices, "sysfs",
        "the RoCE v2 IPv4 GID sits at different indices (" + indices +
            "): one NCCL_IB_GID_INDEX cannot serve every port; leave it unset (NCCL 2.21+ picks per port)");
}

void sockets(const Topology& t, FindingSink& sink) {
  if (t.health.net_interfaces.empty()) return;
  const FabricSetup f = choose_fabric_setup(t);
  if (!f.socket_ifname)
    sink.add("socket_interface_missing", "node", f.socket_evidence, "sysfs",
             "no interface for NCCL's sockets: " + f.socket_evidence);
  if (!f.nccl_default_interface) return;
  bool bridge = is_container_interface(*f.nccl_default_interface);
  for (const auto& n : t.health.net_interfaces)
    if (n.name == *f.nccl_default_interface) bridge = bridge || n.bridge;
  if (bridge)
    sink.add("socket_interface_bridge", *f.nccl_default_interface,
             "NCCL's automatic choice: " + *f.nccl_default_interface, "sysfs",
             "left alone, NCCL would use " + *f.nccl_default_interface +
                 " (a container or VM bridge) for sockets" +
                 (f.socket_ifname ? ": set NCCL_SOCKET_IFNAME=" + *f.socket_ifname : std::string()));
}

void acs(const Topology& t, FindingSink& sink) {
  for (const auto& b : t.health.pci_bridges)
    if (b.acs_control && (*b.acs_control & kAcsRedirectBits))
      sink.add("pcie_acs_redirect", "PCIe port " + b.bus_id, "ACSCtl: " + acs_control_names(*b.acs_control),
               "sysfs",
               "PCIe port " + b.bus_id + " redirects peer-to-peer traffic (ACSCtl " +
                   acs_control_names(*b.acs_control) +
                   "): GPU-NIC and GPU-GPU traffic goes through the CPU; disable ACS (setpci "
                   "ECAP_ACS+0x6.w=0000)");
}

void gdr(const Topology& t, FindingSink& sink) {
  if (!t.from_live_node || !t.health.read || t.gpus.empty()) return;
  bool active_nic = false;
  for (const auto& n : t.nics)
    for (const auto& p : n.ports) active_nic = active_nic || p.state == "ACTIVE";
  if (!active_nic || !t.health.peer_memory.empty()) return;
  for (const auto& m : t.loaded_modules)
    if (m == "nvidia_peermem" || m == "nv_peer_mem") return;
  if (t.health.cuda_dma_buf == true && t.health.rdma_dma_buf == true) return;
  if (!t.health.cuda_dma_buf.has_value() && !t.health.rdma_dma_buf.has_value()) return;  // cannot tell
  const std::string reading = std::string("no peer-memory module; dma-buf: CUDA ") +
                              (t.health.cuda_dma_buf == true    ? "yes"
                               : t.health.cuda_dma_buf == false ? "no"
                                                                : "?") +
                              ", kernel RDMA " +
                              (t.health.rdma_dma_buf == true    ? "yes"
                               : t.health.rdma_dma_buf == false ? "no"
                                                                : "?");
  sink.add("gdr_unavailable", "node", reading, "sysfs",
           "GPUDirect RDMA cannot work (" + reading +
               "): load nvidia_peermem, or use a kernel and driver with dma-buf");
}

}  // namespace

void nic_findings(const Topology& t, FindingSink& sink) {
  for (const auto& n : t.nics) port_state(t, n, sink);
  port_rates(t, sink);
  for (const auto& n : t.nics)
    for (const auto& p : n.ports) port_counters(n, p, sink);
}

void fabric_findings(const Topology& t, FindingSink& sink) {
  if (t.health.read) {
    roce_gids(t, sink);
    sockets(t, sink);
  }
  acs(t, sink);
  gdr(t, sink);
}

}  // namespace autotune::topology::detail
