// Reading a probe JSON record back into the model. A field that is absent takes its default (records
// written before a field existed still read); a field that is present must have the right type and range,
// or the record is refused naming the field, its line and what was expected.

#include <limits>

#include "common/input_error.hpp"
#include "topology/pci_ids.hpp"
#include "topology/probe_json.hpp"

namespace autotune::topology::detail {
namespace {

using nlohmann::json;

class RecordReader {
 public:
  RecordReader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& expected, const json& found) const {
    std::string shown = found.dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    throw InputError(file_, json_pointer_line(text_, pointer),
                     "expected " + expected + " in " + pointer + ", found " + shown);
  }

  // obj[key] or nullptr; obj must be an object.
  const json* field(const json& obj, const std::string& at, const char* key) const {
    if (!obj.is_object()) fail(at, "an object", obj);
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }

  template <typename T>
  std::optional<T> number(const json& obj, const std::string& at, const char* key, T lo, T hi) const {
    const json* v = field(obj, at, key);
    if (!v) return std::nullopt;
    const bool integral = std::numeric_limits<T>::is_integer;
    const bool ok = integral ? (v->is_number_integer() || v->is_number_unsigned()) : v->is_number();
    if (!ok) fail(at + "/" + key, integral ? "an integer" : "a number", *v);
    if (integral && v->is_number_integer() && v->get<long long>() < 0 && lo >= 0)
      fail(at + "/" + key, "a number from " + std::to_string(lo) + " to " + std::to_string(hi), *v);
    const T value = v->get<T>();
    if (value < lo || value > hi)
      fail(at + "/" + key, "a number from " + std::to_string(lo) + " to " + std::to_string(hi), *v);
    return value;
  }
  int integer(const json& obj, const std::string& at, const char* key, int fallback, int lo = -1,
              int hi = 1 << 20) const {
    return number<int>(obj, at, key, lo, hi).value_or(fallback);
  }
  std::optional<uint64_t> count(const json& obj, const std::string& at, const char* key) const {
    return number<uint64_t>(obj, at, key, 0, std::numeric_limits<uint64_t>::max());
  }
  std::optional<unsigned> small_count(const json& obj, const std::string& at, const char* key) const {
    return number<unsigned>(obj, at, key, 0, 1u << 30);
  }
  std::optional<double> real(const json& obj, const std::string& at, const char* key) const {
    return number<double>(obj, at, key, 0.0, 1e12);
  }
  std::optional<bool> flag(const json& obj, const std::string& at, const char* key) const {
    const json* v = field(obj, at, key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(at + "/" + key, "true or false", *v);
    return v->get<bool>();
  }
  std::string text(const json& obj, const std::string& at, const char* key) const {
    const json* v = field(obj, at, key);
    if (!v) return "";
    if (!v->is_string()) fail(at + "/" + key, "a string", *v);
    return v->get<std::string>();
  }
  std::vector<std::string> texts(const json& obj, const std::string& at, const char* key) const {
    std::vector<std::string> out;
    const json& list = array(obj, at, key);
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) fail(at + "/" + key + "/" + std::to_string(i), "a string", list[i]);
      out.push_back(list[i].get<std::string>());
    }
    return out;
  }
  const json& array(const json& obj, const std::string& at, const char* key) const {
    static const json empty = json::array();
    const json* v = field(obj, at, key);
    if (!v) return empty;
    if (!v->is_array()) fail(at + "/" + key, "an array", *v);
    return *v;
  }
  std::string bus_id(const json& obj, const std::string& at, const char* key, bool required) const {
    const std::string v = text(obj, at, key);
    if (v.empty() && !required) return v;
    const std::string id = normalize_bus_id(v);
    if (id.empty())
      fail(at + "/" + key, "a PCI bus id like 0000:1b:00.0", obj.contains(key) ? obj[key] : json());
    return id;
  }
  uint32_t hex_id(const json& obj, const std::string& at, const char* key) const {
    const std::string v = text(obj, at, key);
    uint32_t value = 0;
    if (!v.empty() && !parse_hex(v, value)) fail(at + "/" + key, "a hex id like 0x2330", obj[key]);
    return value;
  }
  std::optional<Counter> counter(const json& obj, const std::string& at, const char* key) const {
    const json* v = field(obj, at, key);
    if (!v) return std::nullopt;
    const std::string here = at + "/" + key;
    auto total = count(*v, here, "total");
    if (!total) fail(here, "an object with a total", *v);
    return Counter{*total, count(*v, here, "increase")};
  }

 private:
  std::string_view text_;
  const std::string& file_;
};

std::vector<PciAncestor> read_path(const RecordReader& r, const json& obj, const std::string& at) {
  std::vector<PciAncestor> out;
  const json& list = r.array(obj, at, "pci_path");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string here = at + "/pci_path/" + std::to_string(i);
    PciAncestor p;
    p.bus_id = r.text(list[i], here, "bus_id");
    if (p.bus_id.empty()) r.fail(here, "an object with a bus_id", list[i]);
    p.is_switch = r.flag(list[i], here, "switch").value_or(true);
    if (const json* l = r.field(list[i], here, "pcie"))
      p.link = {r.integer(*l, here + "/pcie", "width", 0, 0, 64),
                r.real(*l, here + "/pcie", "speed_gts").value_or(0)};
    out.push_back(std::move(p));
  }
  return out;
}

GpuHealth read_gpu_health(const RecordReader& r, const json& h, const std::string& at) {
  GpuHealth g;
  g.ecc_volatile_corrected = r.count(h, at, "ecc_volatile_corrected");
  g.ecc_volatile_uncorrected = r.count(h, at, "ecc_volatile_uncorrected");
  g.ecc_aggregate_corrected = r.count(h, at, "ecc_aggregate_corrected");
  g.ecc_aggregate_uncorrected = r.count(h, at, "ecc_aggregate_uncorrected");
  g.retired_pages_sbe = r.count(h, at, "retired_pages_sbe");
  g.retired_pages_dbe = r.count(h, at, "retired_pages_dbe");
  g.retired_pages_pending = r.flag(h, at, "retired_pages_pending");
  g.remapped_rows_correctable = r.count(h, at, "remapped_rows_correctable");
  g.remapped_rows_uncorrectable = r.count(h, at, "remapped_rows_uncorrectable");
  g.row_remap_pending = r.flag(h, at, "row_remap_pending");
  g.row_remap_failed = r.flag(h, at, "row_remap_failed");
  g.pcie_replay = r.counter(h, at, "pcie_replay");
  g.pcie_gen = r.number<int>(h, at, "pcie_gen", 0, 16);
  g.pcie_gen_max = r.number<int>(h, at, "pcie_gen_max", 0, 16);
  g.pcie_width = r.number<int>(h, at, "pcie_width", 0, 64);
  g.pcie_width_max = r.number<int>(h, at, "pcie_width_max", 0, 64);
  g.clock_event_reasons = r.count(h, at, "clock_event_reasons");
  g.sm_clock_mhz = r.small_count(h, at, "sm_clock_mhz");
  g.sm_clock_max_mhz = r.small_count(h, at, "sm_clock_max_mhz");
  g.temperature_c = r.small_count(h, at, "temperature_c");
  g.temperature_slowdown_c = r.small_count(h, at, "temperature_slowdown_c");
  g.power_w = r.real(h, at, "power_w");
  g.power_limit_w = r.real(h, at, "power_limit_w");
  g.power_default_limit_w = r.real(h, at, "power_default_limit_w");
  g.persistence_mode = r.flag(h, at, "persistence_mode");
  return g;
}

NvLink read_nvlink(const RecordReader& r, const json& l, const std::string& at) {
  NvLink link;
  link.link = r.integer(l, at, "link", 0, 0, 1024);
  link.count = r.integer(l, at, "count", 1, 1, 1024);
  link.up = r.flag(l, at, "up").value_or(true);
  const std::string remote = r.text(l, at, "remote");
  link.remote = remote == "gpu"        ? NvLinkRemote::gpu
                : remote == "nvswitch" ? NvLinkRemote::nvswitch
                : remote == "cpu"      ? NvLinkRemote::cpu
                                       : NvLinkRemote::unknown;
  if (!remote.empty() && remote != "unknown" && link.remote == NvLinkRemote::unknown)
    r.fail(at + "/remote", "gpu, nvswitch, cpu or unknown", l["remote"]);
  link.remote_bus_id = r.bus_id(l, at, "remote_bus_id", false);
  if (const json* e = r.field(l, at, "errors")) {
    link.errors.crc = r.counter(*e, at + "/errors", "crc");
    link.errors.replay = r.counter(*e, at + "/errors", "replay");
    link.errors.recovery = r.counter(*e, at + "/errors", "recovery");
  }
  return link;
}

Gpu read_gpu(const RecordReader& r, const json& g, const std::string& at) {
  Gpu gpu;
  gpu.index = r.integer(g, at, "index", 0, 0, 4096);
  gpu.name = r.text(g, at, "name");
  gpu.pci_bus_id = r.bus_id(g, at, "pci_bus_id", true);
  gpu.pci_device_id = r.hex_id(g, at, "pci_device_id");
  gpu.numa_node = r.integer(g, at, "numa_node", -1);
  gpu.sm = r.integer(g, at, "sm", 0, 0, 1000);
  gpu.pci_path = read_path(r, g, at);
  if (const json* p = r.field(g, at, "pcie"))
    gpu.link = {r.integer(*p, at + "/pcie", "width", 0, 0, 64),
                r.real(*p, at + "/pcie", "speed_gts").value_or(0)};
  if (const json* p = r.field(g, at, "pcie_max"))
    gpu.link_max = {r.integer(*p, at + "/pcie_max", "width", 0, 0, 64),
                    r.real(*p, at + "/pcie_max", "speed_gts").value_or(0)};
  const json& links = r.array(g, at, "nvlinks");
  for (size_t i = 0; i < links.size(); ++i)
    gpu.nvlinks.push_back(read_nvlink(r, links[i], at + "/nvlinks/" + std::to_string(i)));
  if (const json* h = r.field(g, at, "health")) gpu.health = read_gpu_health(r, *h, at + "/health");
  return gpu;
}

NicPort read_port(const RecordReader& r, const json& p, const std::string& at) {
  NicPort port;
  port.port = r.integer(p, at, "port", 1, 0, 255);
  port.state = r.text(p, at, "state");
  if (port.state.empty()) port.state = "unknown";
  port.link_layer = r.text(p, at, "link_layer");
  if (port.link_layer.empty()) port.link_layer = "unknown";
  port.speed_gbps = r.real(p, at, "speed_gbps").value_or(0);
  port.guid = r.text(p, at, "guid");
  if (const json* c = r.field(p, at, "counters")) {
    if (!c->is_object()) r.fail(at + "/counters", "an object of counter names and values", *c);
    for (const auto& [name, value] : c->items())
      port.health.counters[name] = r.count(*c, at + "/counters", name.c_str()).value_or(0);
  }
  const json& gids = r.array(p, at, "gids");
  for (size_t i = 0; i < gids.size(); ++i) {
    const std::string here = at + "/gids/" + std::to_string(i);
    Gid g{r.integer(gids[i], here, "index", 0, 0, 65535), r.text(gids[i], here, "address"),
          r.text(gids[i], here, "type"), r.text(gids[i], here, "netdev")};
    if (g.address.empty()) r.fail(here, "an object with an address", gids[i]);
    port.health.gids.push_back(std::move(g));
  }
  return port;
}

Nic read_nic(const RecordReader& r, const json& n, const std::string& at) {
  Nic nic;
  nic.name = r.text(n, at, "name");
  if (nic.name.empty()) r.fail(at, "an object with a name", n);
  nic.pci_bus_id = r.bus_id(n, at, "pci_bus_id", false);
  nic.pci_vendor_id = r.hex_id(n, at, "pci_vendor_id");
  nic.pci_device_id = r.hex_id(n, at, "pci_device_id");
  nic.model = r.text(n, at, "model");
  nic.numa_node = r.integer(n, at, "numa_node", -1);
  nic.pci_path = read_path(r, n, at);
  if (const json* l = r.field(n, at, "pcie"))
    nic.link = {r.integer(*l, at + "/pcie", "width", 0, 0, 64),
                r.real(*l, at + "/pcie", "speed_gts").value_or(0)};
  nic.collnet = r.flag(n, at, "collnet").value_or(false);
  nic.gdr = r.flag(n, at, "gdr").value_or(false);
  const json& ports = r.array(n, at, "ports");
  for (size_t i = 0; i < ports.size(); ++i)
    nic.ports.push_back(read_port(r, ports[i], at + "/ports/" + std::to_string(i)));
  return nic;
}

DcgmDiag read_dcgm(const RecordReader& r, const json& d, const std::string& at) {
  DcgmDiag out;
  out.level = r.integer(d, at, "level", 1, 1, 4);
  out.ran = r.flag(d, at, "ran").value_or(false);
  out.why = r.text(d, at, "why");
  const json& results = r.array(d, at, "results");
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string here = at + "/results/" + std::to_string(i);
    out.results.push_back({r.text(results[i], here, "test"), r.text(results[i], here, "device"),
                           r.text(results[i], here, "status"), r.text(results[i], here, "detail")});
  }
  return out;
}

HealthReadings read_readings(const RecordReader& r, const json& h, const std::string& at) {
  HealthReadings out;
  out.read = r.flag(h, at, "read").value_or(false);
  out.counter_interval_ms = r.integer(h, at, "counter_interval_ms", 0, 0, 3600000);
  out.peer_memory = r.texts(h, at, "peer_memory");
  const json& net = r.array(h, at, "net_interfaces");
  for (size_t i = 0; i < net.size(); ++i) {
    const std::string here = at + "/net_interfaces/" + std::to_string(i);
    NetInterface n;
    n.name = r.text(net[i], here, "name");
    if (n.name.empty()) r.fail(here, "an object with a name", net[i]);
    n.operstate = r.text(net[i], here, "operstate");
    n.ifindex = r.integer(net[i], here, "ifindex", 0, 0, 1 << 30);
    n.type = r.integer(net[i], here, "type", 0, 0, 65535);
    n.physical = r.flag(net[i], here, "physical").value_or(false);
    n.bridge = r.flag(net[i], here, "bridge").value_or(false);
    n.ipv4 = r.flag(net[i], here, "ipv4").value_or(false);
    n.ipv6_global = r.flag(net[i], here, "ipv6_global").value_or(false);
    n.default_route = r.flag(net[i], here, "default_route").value_or(false);
    out.net_interfaces.push_back(std::move(n));
  }
  const json& bridges = r.array(h, at, "pci_bridges");
  for (size_t i = 0; i < bridges.size(); ++i) {
    const std::string here = at + "/pci_bridges/" + std::to_string(i);
    PciBridge b{r.bus_id(bridges[i], here, "bus_id", true), std::nullopt, r.text(bridges[i], here, "why")};
    if (auto acs = r.number<int>(bridges[i], here, "acs_control", 0, 0xffff)) b.acs_control = *acs;
    out.pci_bridges.push_back(std::move(b));
  }
  out.cuda_dma_buf = r.flag(h, at, "cuda_dma_buf");
  out.rdma_dma_buf = r.flag(h, at, "rdma_dma_buf");
  if (const json* d = r.field(h, at, "dcgm")) out.dcgm = read_dcgm(r, *d, at + "/dcgm");
  return out;
}

}  // namespace

Topology read_probe_json(std::string_view text, const std::string& file) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    int line = 1;
    for (size_t i = 0; i < std::min(e.byte, text.size()); ++i) line += text[i] == '\n';
    throw InputError(file, line, std::string("malformed JSON: ") + e.what());
  }
  const RecordReader r(text, file);
  if (!j.is_object() || !j.contains("schema") || !j.contains("gpus") || !j.contains("nics"))
    r.fail("", "a probe record (nccl-autotune probe --format json): an object with schema, gpus and nics",
           j.is_object() ? json("{...}") : j);
  if (j["schema"] != 1) r.fail("/schema", "schema 1 (what this version writes and reads)", j["schema"]);
  Topology t;
  const std::string recorded = r.text(j, "", "origin");
  t.origin = file;
  t.from_live_node = r.flag(j, "", "from_live_node").value_or(false);
  t.cpu_arch = r.text(j, "", "cpu_arch");
  t.cpu_vendor = r.text(j, "", "cpu_vendor");
  t.cpu_family = r.integer(j, "", "cpu_family", -1, -1, 1 << 16);
  t.cpu_model = r.integer(j, "", "cpu_model", -1, -1, 1 << 16);
  t.numa_nodes = r.integer(j, "", "numa_nodes", 0, 0, 1 << 16);
  const json& gpus = r.array(j, "", "gpus");
  for (size_t i = 0; i < gpus.size(); ++i)
    t.gpus.push_back(read_gpu(r, gpus[i], "/gpus/" + std::to_string(i)));
  const json& nics = r.array(j, "", "nics");
  for (size_t i = 0; i < nics.size(); ++i)
    t.nics.push_back(read_nic(r, nics[i], "/nics/" + std::to_string(i)));
  for (const auto& s : r.texts(j, "", "nvswitches")) t.nvswitches.push_back({s});
  t.nvswitch_seen = r.flag(j, "", "nvswitch_seen").value_or(!t.nvswitches.empty());
  t.loaded_modules = r.texts(j, "", "loaded_modules");
  t.net_plugins = r.texts(j, "", "net_plugins");
  t.cuda_multicast = r.flag(j, "", "cuda_multicast");
  if (const json* h = r.field(j, "", "readings")) t.health = read_readings(r, *h, "/readings");
  t.sources.push_back({"file:" + file, true,
                       "probe record of " + (recorded.empty() ? std::string("a node") : recorded) + ": " +
                           std::to_string(t.gpus.size()) + " GPUs, " + std::to_string(t.nics.size()) +
                           " NICs"});
  const json& sources = r.array(j, "", "sources");
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string here = "/sources/" + std::to_string(i);
    t.sources.push_back({r.text(sources[i], here, "name"),
                         r.flag(sources[i], here, "available").value_or(false),
                         r.text(sources[i], here, "detail")});
  }
  return t;
}

}  // namespace autotune::topology::detail
