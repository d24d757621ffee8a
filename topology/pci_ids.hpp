#pragma once
// What a PCI vendor/device/class id means for collective performance: the marketing name and SM version of
// NVIDIA GPUs, the model of common RDMA NICs, and the PCI class families NCCL's topology format relies on.
// A small table of public facts; an id it does not know yields "" / 0 (unknown), never a guess.

#include <cstdint>
#include <string>

namespace autotune::topology {

inline constexpr uint32_t kVendorNvidia = 0x10de;
inline constexpr uint32_t kVendorMellanox = 0x15b3;
inline constexpr uint32_t kVendorAmazon = 0x1d0f;

// PCI class codes as NCCL writes them (24 bits: class, subclass, prog-if).
bool is_pci_bridge_class(uint32_t class_code);  // 0x0604xx: a PCIe switch port or root port
bool is_nvswitch_class(uint32_t class_code);    // 0x0680xx: an NVSwitch (NCCL's "other bridge" class)
bool is_gpu_class(uint32_t class_code);         // 0x03xxxx: display/3D controller
bool is_nic_class(uint32_t class_code);         // 0x02xxxx: network or InfiniBand controller

std::string gpu_name_for(uint32_t device_id);  // "NVIDIA H100 80GB HBM3"; "" when unknown
int gpu_sm_for(uint32_t device_id);            // 90; 0 when unknown
std::string nic_model_for(uint32_t vendor_id, uint32_t device_id);  // "ConnectX-7"; "" when unknown
// The fastest a port of this NIC model runs, Gb/s (ConnectX-7: 400); 0 when unknown.
double nic_max_gbps_for(const std::string& model);

// Parses "0x10de", "10de" or "0x060400"; returns false on anything else.
bool parse_hex(const std::string& text, uint32_t& value);

// "0000:1B:00.0" -> "0000:1b:00.0"; "1b:00.0" -> "0000:1b:00.0". Returns "" when it is not a bus id.
std::string normalize_bus_id(const std::string& text);

}  // namespace autotune::topology
