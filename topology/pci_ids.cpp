#include "topology/pci_ids.hpp"

#include <cctype>
#include <cstdio>

namespace autotune::topology {
namespace {

struct GpuId {
  uint32_t device;
  const char* name;
  int sm;
};

// From the PCI ID repository and NVIDIA's product pages; only parts that appear in multi-GPU servers.
constexpr GpuId kGpus[] = {
    {0x15f7, "Tesla P100-PCIE-12GB", 60},
    {0x15f8, "Tesla P100-PCIE-16GB", 60},
    {0x15f9, "Tesla P100-SXM2-16GB", 60},
    {0x1db1, "Tesla V100-SXM2-16GB", 70},
    {0x1db4, "Tesla V100-PCIE-16GB", 70},
    {0x1db5, "Tesla V100-SXM2-32GB", 70},
    {0x1db6, "Tesla V100-PCIE-32GB", 70},
    {0x20b0, "NVIDIA A100-SXM4-40GB", 80},
    {0x20b2, "NVIDIA A100-SXM4-80GB", 80},
    {0x20b5, "NVIDIA A100 80GB PCIe", 80},
    {0x20f1, "NVIDIA A100-PCIE-40GB", 80},
    {0x20b7, "NVIDIA A30", 80},
    {0x2235, "NVIDIA A40", 86},
    {0x26b5, "NVIDIA L40", 89},
    {0x26b9, "NVIDIA L40S", 89},
    {0x2330, "NVIDIA H100 80GB HBM3", 90},
    {0x2331, "NVIDIA H100 PCIe", 90},
    {0x2324, "NVIDIA H800", 90},
    {0x2335, "NVIDIA H200", 90},
    {0x233b, "NVIDIA H200 NVL", 90},
    {0x2342, "NVIDIA GH200 480GB", 90},
    {0x2901, "NVIDIA B200", 100},
};

struct NicId {
  uint32_t vendor;
  uint32_t device;
  const char* model;
  double max_gbps;  // per port, from NVIDIA's product briefs; 0 = not stated here
};

constexpr NicId kNics[] = {
    {kVendorMellanox, 0x1003, "ConnectX-3", 56},
    {kVendorMellanox, 0x1007, "ConnectX-3 Pro", 56},
    {kVendorMellanox, 0x1013, "ConnectX-4", 100},
    {kVendorMellanox, 0x1015, "ConnectX-4 Lx", 50},
    {kVendorMellanox, 0x1017, "ConnectX-5", 100},
    {kVendorMellanox, 0x1019, "ConnectX-5 Ex", 100},
    {kVendorMellanox, 0x101b, "ConnectX-6", 200},
    {kVendorMellanox, 0x101d, "ConnectX-6 Dx", 200},
    {kVendorMellanox, 0x101f, "ConnectX-6 Lx", 50},
    {kVendorMellanox, 0x1021, "ConnectX-7", 400},
    {kVendorMellanox, 0x1023, "ConnectX-8", 800},
    {kVendorMellanox, 0xa2dc, "BlueField-3", 400},
    {kVendorAmazon, 0xefa0, "EFA", 0},
    {kVendorAmazon, 0xefa1, "EFA", 0},
    {kVendorAmazon, 0xefa2, "EFA", 0},
};

}  // namespace

bool is_pci_bridge_class(uint32_t c) {
  return (c >> 8) == 0x0604;
}
bool is_nvswitch_class(uint32_t c) {
  return (c >> 8) == 0x0680;
}
bool is_gpu_class(uint32_t c) {
  return (c >> 16) == 0x03;
}
bool is_nic_class(uint32_t c) {
  return (c >> 16) == 0x02;
}

std::string gpu_name_for(uint32_t device_id) {
  for (const auto& g : kGpus)
    if (g.device == device_id) return g.name;
  return "";
}

int gpu_sm_for(uint32_t device_id) {
  for (const auto& g : kGpus)
    if (g.device == device_id) return g.sm;
  return 0;
}

std::string nic_model_for(uint32_t vendor_id, uint32_t device_id) {
  for (const auto& n : kNics)
    if (n.vendor == vendor_id && n.device == device_id) return n.model;
  return "";
}

double nic_max_gbps_for(const std::string& model) {
  for (const auto& n : kNics)
    if (model == n.model) return n.max_gbps;
  return 0.0;
}

bool parse_hex(const std::string& text, uint32_t& value) {
  std::string digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
    digits = digits.substr(2);
  if (digits.empty() || digits.size() > 8) return false;
  uint32_t v = 0;
  for (char c : digits) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    v = v * 16 + static_cast<uint32_t>(
                     std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10));
  }
  value = v;
  return true;
}

std::string normalize_bus_id(const std::string& text) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) == 4) {
  } else if (std::sscanf(text.c_str(), "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3) {
    domain = 0;
  } else {
    return "";
  }
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 7) return "";
  char out[16];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return out;
}

}  // namespace autotune::topology
