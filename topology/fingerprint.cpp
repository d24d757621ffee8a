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

std::string fingerprint_description(const Topology& t, int nccl_major_minor) {
  std::string d = "nccl " + nccl::Version{nccl_major_minor / 100, nccl_major_minor % 100}.major_minor_text() + "\n";
  d += "numa " + std::to_string(t.numa_nodes) + "\n";
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
  for (const auto& [k, v] : gpus) d += "gpu " + std::to_string(v) + "x " + k + "\n";
  for (const auto& [k, v] : nics) d += "nic " + std::to_string(v) + "x " + k + "\n";
  d += "nvswitch " + std::string(t.nvswitch_seen || !t.nvswitches.empty() ? "yes" : "no") + "\n";
  for (const auto& [k, v] : paths) d += "path " + k + " " + std::to_string(v) + "\n";
  std::map<int, int> per_numa;
  for (const auto& g : t.gpus) ++per_numa[g.numa_node];
  std::vector<int> shape;
  for (const auto& [numa, count] : per_numa) shape.push_back(count);
  std::sort(shape.begin(), shape.end());
  d += "gpus-per-numa";
  for (int c : shape) d += " " + std::to_string(c);
  d += "\n";
  return d;
}

std::string fingerprint(const Topology& t, int nccl_major_minor) {
  const std::string d = fingerprint_description(t, nccl_major_minor);
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : d) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace autotune::topology
