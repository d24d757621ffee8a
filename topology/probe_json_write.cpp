// Writing the model into the probe's JSON record. Absent readings are left out (not null), so that a
// record says only what was read; probe_json_read.cpp reads every field written here.

#include <cstdio>

#include "topology/probe_json.hpp"

namespace autotune::topology::detail {
namespace {

using nlohmann::json;

std::string remote_name(NvLinkRemote r) {
  switch (r) {
    case NvLinkRemote::gpu:
      return "gpu";
    case NvLinkRemote::nvswitch:
      return "nvswitch";
    case NvLinkRemote::cpu:
      return "cpu";
    case NvLinkRemote::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%04x", v);
  return text;
}

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

void put(json& j, const char* key, const std::optional<Counter>& c) {
  if (!c) return;
  json v = {{"total", c->total}};
  if (c->increase) v["increase"] = *c->increase;
  j[key] = v;
}

json path_json(const std::vector<PciAncestor>& path) {
  json out = json::array();
  for (const auto& p : path) {
    json a = {{"bus_id", p.bus_id}, {"switch", p.is_switch}};
    if (p.link.width > 0 || p.link.speed_gts > 0)
      a["pcie"] = {{"width", p.link.width}, {"speed_gts", p.link.speed_gts}};
    out.push_back(a);
  }
  return out;
}

json gpu_health_json(const GpuHealth& h) {
  json j = json::object();
  put(j, "ecc_volatile_corrected", h.ecc_volatile_corrected);
  put(j, "ecc_volatile_uncorrected", h.ecc_volatile_uncorrected);
  put(j, "ecc_aggregate_corrected", h.ecc_aggregate_corrected);
  put(j, "ecc_aggregate_uncorrected", h.ecc_aggregate_uncorrected);
  put(j, "retired_pages_sbe", h.retired_pages_sbe);
  put(j, "retired_pages_dbe", h.retired_pages_dbe);
  put(j, "retired_pages_pending", h.retired_pages_pending);
  put(j, "remapped_rows_correctable", h.remapped_rows_correctable);
  put(j, "remapped_rows_uncorrectable", h.remapped_rows_uncorrectable);
  put(j, "row_remap_pending", h.row_remap_pending);
  put(j, "row_remap_failed", h.row_remap_failed);
  put(j, "pcie_replay", h.pcie_replay);
  put(j, "pcie_gen", h.pcie_gen);
  put(j, "pcie_gen_max", h.pcie_gen_max);
  put(j, "pcie_width", h.pcie_width);
  put(j, "pcie_width_max", h.pcie_width_max);
  put(j, "clock_event_reasons", h.clock_event_reasons);
  put(j, "sm_clock_mhz", h.sm_clock_mhz);
  put(j, "sm_clock_max_mhz", h.sm_clock_max_mhz);
  put(j, "temperature_c", h.temperature_c);
  put(j, "temperature_slowdown_c", h.temperature_slowdown_c);
  put(j, "power_w", h.power_w);
  put(j, "power_limit_w", h.power_limit_w);
  put(j, "power_default_limit_w", h.power_default_limit_w);
  put(j, "persistence_mode", h.persistence_mode);
  return j;
}

json gpu_json(const Gpu& g) {
  json links = json::array();
  for (const auto& l : g.nvlinks) {
    json link = {{"link", l.link},
                 {"count", l.count},
                 {"up", l.up},
                 {"remote", remote_name(l.remote)},
                 {"remote_bus_id", l.remote_bus_id}};
    json errors = json::object();
    put(errors, "crc", l.errors.crc);
    put(errors, "replay", l.errors.replay);
    put(errors, "recovery", l.errors.recovery);
    if (!errors.empty()) link["errors"] = errors;
    links.push_back(link);
  }
  json j = {{"index", g.index},
            {"name", g.name},
            {"pci_bus_id", g.pci_bus_id},
            {"pci_device_id", hex(g.pci_device_id)},
            {"numa_node", g.numa_node},
            {"sm", g.sm},
            {"nvlink_links", g.nvlink_links()},
            {"nvlinks", links},
            {"pci_path", path_json(g.pci_path)},
            {"pcie", {{"width", g.link.width}, {"speed_gts", g.link.speed_gts}}},
            {"pcie_max", {{"width", g.link_max.width}, {"speed_gts", g.link_max.speed_gts}}}};
  if (g.health) j["health"] = gpu_health_json(*g.health);
  return j;
}

json port_json(const NicPort& p) {
  json j = {{"port", p.port}, {"state", p.state}, {"link_layer", p.link_layer}, {"speed_gbps", p.speed_gbps}};
  if (!p.guid.empty()) j["guid"] = p.guid;
  if (!p.health.counters.empty()) j["counters"] = p.health.counters;
  if (!p.health.gids.empty()) {
    json gids = json::array();
    for (const auto& g : p.health.gids)
      gids.push_back({{"index", g.index}, {"address", g.address}, {"type", g.type}, {"netdev", g.netdev}});
    j["gids"] = gids;
  }
  return j;
}

json nic_json(const Nic& n) {
  json ports = json::array();
  for (const auto& p : n.ports) ports.push_back(port_json(p));
  return {{"name", n.name},
          {"pci_bus_id", n.pci_bus_id},
          {"pci_vendor_id", hex(n.pci_vendor_id)},
          {"pci_device_id", hex(n.pci_device_id)},
          {"model", n.model},
          {"numa_node", n.numa_node},
          {"pci_path", path_json(n.pci_path)},
          {"pcie", {{"width", n.link.width}, {"speed_gts", n.link.speed_gts}}},
          {"collnet", n.collnet},
          {"gdr", n.gdr},
          {"ports", ports}};
}

json readings_json(const HealthReadings& h) {
  json j = {{"read", h.read}, {"counter_interval_ms", h.counter_interval_ms}, {"peer_memory", h.peer_memory}};
  json net = json::array();
  for (const auto& n : h.net_interfaces)
    net.push_back({{"name", n.name},
                   {"operstate", n.operstate},
                   {"ifindex", n.ifindex},
                   {"type", n.type},
                   {"physical", n.physical},
                   {"bridge", n.bridge},
                   {"ipv4", n.ipv4},
                   {"ipv6_global", n.ipv6_global},
                   {"default_route", n.default_route}});
  j["net_interfaces"] = net;
  json bridges = json::array();
  for (const auto& b : h.pci_bridges) {
    json e = {{"bus_id", b.bus_id}};
    put(e, "acs_control", b.acs_control);
    if (!b.why.empty()) e["why"] = b.why;
    bridges.push_back(e);
  }
  j["pci_bridges"] = bridges;
  put(j, "cuda_dma_buf", h.cuda_dma_buf);
  put(j, "rdma_dma_buf", h.rdma_dma_buf);
  if (h.dcgm) {
    json results = json::array();
    for (const auto& r : h.dcgm->results)
      results.push_back({{"test", r.test}, {"device", r.device}, {"status", r.status}, {"detail", r.detail}});
    j["dcgm"] = {{"level", h.dcgm->level}, {"ran", h.dcgm->ran}, {"why", h.dcgm->why}, {"results", results}};
  }
  return j;
}

}  // namespace

void write_topology_json(const Topology& t, json& j) {
  j["origin"] = t.origin;
  j["from_live_node"] = t.from_live_node;
  j["cpu_arch"] = t.cpu_arch;
  j["cpu_vendor"] = t.cpu_vendor;
  if (t.cpu_family >= 0) j["cpu_family"] = t.cpu_family;
  if (t.cpu_model >= 0) j["cpu_model"] = t.cpu_model;
  j["numa_nodes"] = t.numa_nodes;
  j["gpus"] = json::array();
  for (const auto& g : t.gpus) j["gpus"].push_back(gpu_json(g));
  j["nics"] = json::array();
  for (const auto& n : t.nics) j["nics"].push_back(nic_json(n));
  j["nvswitches"] = json::array();
  for (const auto& s : t.nvswitches) j["nvswitches"].push_back(s.pci_bus_id);
  j["nvswitch_seen"] = t.nvswitch_seen;
  j["loaded_modules"] = t.loaded_modules;
  j["net_plugins"] = t.net_plugins;
  if (t.cuda_multicast) j["cuda_multicast"] = *t.cuda_multicast;
  j["readings"] = readings_json(t.health);
  j["sources"] = json::array();
  for (const auto& s : t.sources)
    j["sources"].push_back({{"name", s.name}, {"available", s.available}, {"detail", s.detail}});
}

}  // namespace autotune::topology::detail
