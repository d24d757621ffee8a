#include "topology/fingerprint.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "nccl/version.hpp"
#include "topology/analysis.hpp"

namespace autotune::topology {
namespace {

std::string gpu_model(const Gpu& g) {
  if (!g.name.empty()) return g.name;
  char text[32];
  std::snprintf(text, sizeof text, "10de:%04x", g.pci_device_id);
  return text;
}

std::string nic_model(const Nic& n) {
  if (!n.model.empty()) return n.model;
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%04x", n.pci_vendor_id, n.pci_device_id);
  return text;
}

}  // namespace

std::vector<std::string> fingerprint_facts(const Topology& t, int nccl_major_minor) {
  std::vector<std::string> d;
  d.push_back("nccl " + nccl::Version{nccl_major_minor / 100, nccl_major_minor % 100}.major_minor_text());
  d.push_back("numa " + std::to_string(t.numa_nodes));
  // Multisets, sorted, so that enumeration order (bus numbering) does not matter.
  std::map<std::string, int> gpus, nics, paths;
  for (const auto& g : t.gpus) {
    std::string links;
    std::map<std::string, int> by_remote;
    for (const auto& l : g.nvlinks)
      by_remote[l.remote == NvLinkRemote::nvswitch ? "switch"
                : l.remote == NvLinkRemote::gpu    ? "gpu"
                : l.remote == NvLinkRemote::cpu    ? "cpu"
                                                   : "other"] += l.count;
    for (const auto& [remote, count] : by_remote) links += " " + remote + "x" + std::to_string(count);
    ++gpus[gpu_model(g) + " sm" + std::to_string(g.sm) + " nvlink" + (links.empty() ? " none" : links)];
  }
  // A NIC is its model and link layer; the speed is the kind of fabric, taken per model as the fastest any
  // of its ports runs on this node, so that a port down or trained below its rate (a health finding) leaves
  // the fingerprint alone. Port state and port counts are not hashed (NCCL's dumps list only usable ports).
  std::map<std::string, double> model_speed;
  for (const auto& n : t.nics)
    for (const auto& port : n.ports) {
      double& s = model_speed[nic_model(n)];
      s = std::max(s, port.speed_gbps);
    }
  for (const auto& n : t.nics) {
    std::set<std::string> layers;
    for (const auto& port : n.ports) layers.insert(port.link_layer);
    std::string desc = nic_model(n);
    for (const auto& l : layers) desc += " " + l;
    if (layers.empty()) desc += " ports?";
    char speed[32];
    std::snprintf(speed, sizeof speed, " %gGb/s", model_speed[nic_model(n)]);
    ++nics[desc + speed];
  }
  // Path classes: how many GPU-NIC pairs of each PCI type, plus GPUs per NUMA node (affinity shape).
  for (const auto& g : t.gpus)
    for (const auto& n : t.nics)
      ++paths[std::string(path_name(pci_path_type(g.pci_path, g.numa_node, n.pci_path, n.numa_node)))];
  for (const auto& [k, v] : gpus) d.push_back("gpu " + std::to_string(v) + "x " + k);
  for (const auto& [k, v] : nics) d.push_back("nic " + std::to_string(v) + "x " + k);
  d.push_back("nvswitch " + std::string(t.nvswitch_seen || !t.nvswitches.empty() ? "yes" : "no"));
  for (const auto& [k, v] : paths) d.push_back("path " + k + " " + std::to_string(v));
  std::map<int, int> per_numa;
  for (const auto& g : t.gpus) ++per_numa[g.numa_node];
  std::vector<int> shape;
  for (const auto& [numa, count] : per_numa) shape.push_back(count);
  std::sort(shape.begin(), shape.end());
  std::string per_numa_text = "gpus-per-numa";
  for (int c : shape) per_numa_text += " " + std::to_string(c);
  d.push_back(per_numa_text);
  return d;
}

std::string fingerprint(const Topology& t, int nccl_major_minor) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto hash = [&h](unsigned char c) {
    h ^= c;
    h *= 0x100000001b3ull;
  };
  for (const std::string& fact : fingerprint_facts(t, nccl_major_minor)) {
    for (unsigned char c : fact) hash(c);
    hash('\n');
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

namespace {

// A fact's kind as an operator reads it, and its value without the kind.
std::pair<std::string, std::string> kind_and_value(const std::string& fact) {
  static const std::map<std::string, std::string> kNames = {
      {"nccl", "NCCL version"},        {"numa", "NUMA nodes"}, {"gpu", "GPUs"},
      {"nic", "NICs"},                 {"nvswitch", "NVSwitch"}, {"path", "GPU-NIC paths"},
      {"gpus-per-numa", "GPUs per NUMA node"}};
  const size_t space = fact.find(' ');
  const std::string kind = fact.substr(0, space);
  auto it = kNames.find(kind);
  return {it == kNames.end() ? kind : it->second, space == std::string::npos ? "" : fact.substr(space + 1)};
}

std::string joined(const std::vector<std::string>& values) {
  if (values.empty()) return "none";
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : "; ") + v;
  return out;
}

}  // namespace

std::vector<std::string> fingerprint_differences(const std::vector<std::string>& calibrated,
                                                 const std::vector<std::string>& here) {
  // Kinds in the order the facts list them; within a kind, the facts one side has and the other lacks.
  std::vector<std::string> kinds;
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> sides;
  const std::set<std::string> in_calibrated(calibrated.begin(), calibrated.end()), in_here(here.begin(), here.end());
  auto add = [&](const std::string& fact, bool from_calibrated) {
    auto [kind, value] = kind_and_value(fact);
    if (!sides.count(kind)) kinds.push_back(kind);
    auto& side = sides[kind];
    if (from_calibrated && !in_here.count(fact)) side.first.push_back(value);
    if (!from_calibrated && !in_calibrated.count(fact)) side.second.push_back(value);
  };
  for (const auto& f : calibrated) add(f, true);
  for (const auto& f : here) add(f, false);
  std::vector<std::string> out;
  for (const auto& kind : kinds) {
    const auto& [theirs, ours] = sides[kind];
    if (theirs.empty() && ours.empty()) continue;
    out.push_back(kind + ": calibrated " + joined(theirs) + ", this node " + joined(ours));
  }
  return out;
}

}  // namespace autotune::topology
