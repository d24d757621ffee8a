#include "tests/standin/common/devices.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/standin/common/node_topology.hpp"

namespace autotune::standin {

namespace {

// Public figures per generation where the recorded file does not say: SMs of the SXM parts.
int multiprocessors_for(int sm) {
  if (sm >= 100) return 148;
  if (sm >= 90) return 132;
  if (sm >= 80) return 108;
  return 80;
}

// "NVIDIA H100 80GB HBM3" -> 80 GiB: the number before "GB"; 16 GiB when the name gives none.
size_t memory_for(const std::string& name) {
  const size_t gb = name.find("GB");
  size_t start = gb;
  while (start > 0 && start != std::string::npos && std::isdigit(static_cast<unsigned char>(name[start - 1])))
    --start;
  const size_t gib = gb != std::string::npos && start < gb ? std::stoul(name.substr(start, gb - start)) : 16;
  return gib << 30;
}

DeviceInfo describe(const topology::Gpu& g, int ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = g.name.empty() ? "NVIDIA GPU (stand-in)" : g.name;
  d.pci_bus_id = g.pci_bus_id;
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(g.pci_bus_id.c_str(), "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
    d.pci_domain = static_cast<int>(dom);
    d.pci_bus = static_cast<int>(bus);
    d.pci_device = static_cast<int>(dev);
  }
  d.sm = g.sm > 0 ? g.sm : 80;
  d.memory_bytes = memory_for(d.name);
  d.multiprocessors = multiprocessors_for(d.sm);
  // Stable across runs and processes: derived from the position and bus id, never random.
  for (size_t i = 0; i < sizeof d.uuid; ++i)
    d.uuid[i] = static_cast<unsigned char>(0x5a ^ (g.index * 31 + static_cast<int>(i) * 7 + d.pci_bus));
  return d;
}

std::vector<DeviceInfo> visible() {
  const auto& gpus = node_topology().gpus;
  std::vector<int> order;
  const char* list = std::getenv("CUDA_VISIBLE_DEVICES");
  if (list == nullptr) {
    for (size_t i = 0; i < gpus.size(); ++i) order.push_back(static_cast<int>(i));
  } else {
    std::string text = list;
    size_t start = 0;
    while (start < text.size()) {
      size_t comma = text.find(',', start);
      std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      char* end = nullptr;
      long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 0 || v >= static_cast<long>(gpus.size())) break;
      order.push_back(static_cast<int>(v));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  std::vector<DeviceInfo> out;
  for (int i : order) out.push_back(describe(gpus[static_cast<size_t>(i)], static_cast<int>(out.size())));
  return out;
}

}  // namespace

const std::vector<DeviceInfo>& devices() {
  static const std::vector<DeviceInfo> list = visible();
  return list;
}

int& current_device() {
  thread_local int device = 0;
  return device;
}

}  // namespace autotune::standin
