#pragma once
// What one node is, as far as collective performance goes. Every source (live machine, hwloc XML, NCCL
// topology XML, sysfs tree) fills this same model; analysis, fingerprint and output read only this.

#include <optional>
#include <string>
#include <vector>

#include "topology/health_readings.hpp"

namespace autotune::topology {

// One hop of the PCI tree from the host bridge down to a device: the bus id of a bridge/switch port.
// Two devices share a PCI switch when their paths share a switch element.
struct PcieLink {
  int width = 0;           // lanes; 0 = unknown
  double speed_gts = 0.0;  // GT/s per lane; 0 = unknown
};
struct PciAncestor {
  std::string bus_id;  // "0000:17:00.0"; may be synthetic ("switch-3") when the source has no bus id
  bool is_switch = true;
  PcieLink link{};  // its link to the element above it (NCCL XML link_speed/link_width); unknown 0
};

enum class NvLinkRemote { gpu, nvswitch, cpu, unknown };
// What NCCL writes as the target of an NVLink to an NVSwitch that is not on the PCI tree.
inline constexpr const char* kNvSwitchOffPciTree = "fffffff:ff:ff.0";

struct NvLink {
  int link = 0;
  bool up = true;
  NvLinkRemote remote = NvLinkRemote::unknown;
  std::string remote_bus_id;  // the peer GPU or NVSwitch, where known; kNvSwitchOffPciTree for an NVSwitch
                              // NCCL found no PCI device of (its dumps in VMs name it so)
  int count = 1;              // NCCL XML groups parallel links into one element with a count
  NvLinkErrors errors;        // live (or recorded) health readings
};

struct Gpu {
  int index = 0;               // CUDA device order (or order found in the file)
  std::string name;            // "NVIDIA H100 80GB HBM3"; may be "" from a skeleton file
  std::string pci_bus_id;      // "0000:1b:00.0", lower case, with domain
  uint32_t pci_device_id = 0;  // 0x2330
  int numa_node = -1;
  int sm = 0;                         // 90 for Hopper; 0 = unknown
  std::vector<PciAncestor> pci_path;  // host bridge first
  PcieLink link;
  PcieLink link_max;
  std::vector<NvLink> nvlinks;
  std::optional<GpuHealth> health;  // NVML's readings, where health was read
  int nvlink_links() const {
    int n = 0;
    for (const auto& l : nvlinks) n += l.count;
    return n;
  }
};

struct NicPort {
  int port = 1;
  std::string state = "ACTIVE";           // verbs names: ACTIVE, DOWN, INIT, ARMED
  std::string link_layer = "InfiniBand";  // or "Ethernet"
  double speed_gbps = 0.0;
  std::string guid;
  PortHealth health;  // counters and GIDs, where health was read
};

struct Nic {
  std::string name;  // "mlx5_0"
  std::string pci_bus_id;
  uint32_t pci_vendor_id = 0;
  uint32_t pci_device_id = 0;
  std::string model;  // "ConnectX-7" where known
  int numa_node = -1;
  std::vector<PciAncestor> pci_path;
  PcieLink link{};  // the card's own PCIe link; unknown 0
  std::vector<NicPort> ports;
  bool collnet = false;  // NCCL XML `coll` attribute
  bool gdr = false;
};

struct NvSwitch {
  std::string pci_bus_id;
};

// Whether a source could be read, and why not.
struct SourceStatus {
  std::string name;  // "hwloc", "cuda", "nvml", "ibverbs", "sysfs", "file:<path>"
  bool available = false;
  std::string detail;  // what was read, or why it was not available
};

struct Topology {
  std::string origin;  // "live" or the file read
  std::string cpu_arch;
  std::string cpu_vendor;
  // x86 CPU family and model numbers (NCCL's familyid/modelid; it requires both for an Intel cpu); -1
  // unknown.
  int cpu_family = -1, cpu_model = -1;
  int numa_nodes = 0;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<NvSwitch> nvswitches;
  bool nvswitch_seen = false;  // NVSwitch proven some other way (NVLink remote type, NCCL XML nvlink target)
  std::vector<SourceStatus> sources;
  // Live only: kernel modules and plugin libraries seen, for feature evidence.
  std::vector<std::string> loaded_modules;
  std::vector<std::string> net_plugins;
  std::optional<bool> cuda_multicast;  // CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, live only
  // The libraries' answers (CUDA, NVML, verbs, modules) describe this node: a live probe, or a probe JSON
  // record of one read back.
  bool from_live_node = false;
  HealthReadings health;
};

}  // namespace autotune::topology
