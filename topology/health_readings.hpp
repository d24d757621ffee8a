#pragma once
// What the probe read about a node's health, kept apart from what the node is: error counters, clocks,
// temperatures, link training, GID tables, socket interfaces, ACS, GPUDirect RDMA prerequisites and DCGM's
// verdicts. Every reading is optional (absent = not read: no driver, no permission, a recorded file without
// it), so a recorded node stands in for a live one and findings are made only from what was really read.
// Plain values; see topology/health.hpp for what they mean.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace autotune::topology {

// A cumulative hardware counter: its value when read and, where the probe read it twice
// (HealthReadings::counter_interval_ms apart), how much it grew in between.
struct Counter {
  uint64_t total = 0;
  std::optional<uint64_t> increase;
  bool operator==(const Counter&) const = default;
};

// NVML's readings of one GPU.
struct GpuHealth {
  // ECC error counts (nvmlDeviceGetTotalEccErrors): volatile since the driver loaded, aggregate for the
  // GPU's life.
  std::optional<uint64_t> ecc_volatile_corrected, ecc_volatile_uncorrected;
  std::optional<uint64_t> ecc_aggregate_corrected, ecc_aggregate_uncorrected;
  // Page retirement (before Ampere) and row remapping (Ampere and later).
  std::optional<uint64_t> retired_pages_sbe, retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<uint64_t> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> row_remap_pending, row_remap_failed;
  // PCIe as the GPU sees it.
  std::optional<Counter> pcie_replay;
  std::optional<int> pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
  // nvmlClocksEventReason* bits (what holds the clocks down right now).
  std::optional<uint64_t> clock_event_reasons;
  std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz;
  std::optional<unsigned> temperature_c, temperature_slowdown_c;
  std::optional<double> power_w, power_limit_w, power_default_limit_w;
  std::optional<bool> persistence_mode;
  bool operator==(const GpuHealth&) const = default;
};

// nvmlClocksEventReason* bits, as nvml.h defines them.
namespace clock_event {
inline constexpr uint64_t gpu_idle = 0x1, applications_clocks = 0x2, sw_power_cap = 0x4, hw_slowdown = 0x8,
                          sync_boost = 0x10, sw_thermal = 0x20, hw_thermal = 0x40, hw_power_brake = 0x80,
                          display_clock = 0x100;
}

// NVLink error counters of one link (nvmlDeviceGetNvLinkErrorCounter; CRC = flit + data).
struct NvLinkErrors {
  std::optional<Counter> crc, replay, recovery;
  bool operator==(const NvLinkErrors&) const = default;
};

// One entry of a port's GID table (sysfs ports/N/gids/K and gid_attrs/{types,ndevs}/K).
struct Gid {
  int index = 0;
  std::string address;  // as the kernel writes it: "0000:0000:0000:0000:0000:ffff:0a00:0001"
  std::string type;     // "IB/RoCE v1", "RoCE v2", or "" when the kernel did not say
  std::string netdev;   // the Ethernet interface the GID belongs to (RoCE)
  bool operator==(const Gid&) const = default;
};

// A network interface NCCL's socket code could use (sysfs class/net, proc/net/route, proc/net/if_inet6).
struct NetInterface {
  std::string name;
  std::string operstate;  // "up", "down", "unknown", ...
  int ifindex = 0;        // NCCL scans interfaces in this order
  int type = 0;           // ARPHRD_*: 1 Ethernet, 32 InfiniBand (IPoIB), 772 loopback
  bool physical = false;  // backed by a device (not a bridge, veth, tunnel or loopback)
  bool bridge = false;
  bool ipv4 = false;         // has an IPv4 route (so an address)
  bool ipv6_global = false;  // has a global IPv6 address
  bool default_route = false;
  bool operator==(const NetInterface&) const = default;
};

// A PCIe bridge (root or switch port) on the path between GPUs and NICs, and its ACS control register.
struct PciBridge {
  std::string bus_id;
  std::optional<uint16_t> acs_control;  // nullopt: no ACS capability, or config space not readable
  std::string why;                      // when acs_control is absent: which of the two
  bool operator==(const PciBridge&) const = default;
};

// One result of `dcgmi diag`.
struct DcgmResult {
  std::string test;    // "Memory", "PCIe", "Deployment: Persistence Mode", ...
  std::string device;  // "GPU2", or "node" for results not tied to a GPU
  std::string status;  // "pass", "fail", "warn", "skip"
  std::string detail;  // DCGM's warning text
  bool operator==(const DcgmResult&) const = default;
};

struct DcgmDiag {
  int level = 1;
  bool ran = false;
  std::string why;  // when it did not run, or its output could not be read
  std::vector<DcgmResult> results;
  bool operator==(const DcgmDiag&) const = default;
};

// The node-wide readings (per-device ones live on Gpu, NvLink and NicPort).
struct HealthReadings {
  bool read = false;            // the probe was asked for health readings
  int counter_interval_ms = 0;  // between the two reads of each counter (0: read once)
  std::vector<NetInterface> net_interfaces;
  std::vector<PciBridge> pci_bridges;
  // NCCL's own GPUDirect RDMA tests: the peer-memory files it looks for (those present), CUDA's
  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED on every GPU, and the kernel's RDMA dma-buf support.
  std::vector<std::string> peer_memory;
  std::optional<bool> cuda_dma_buf;
  std::optional<bool> rdma_dma_buf;
  std::optional<DcgmDiag> dcgm;
  bool operator==(const HealthReadings&) const = default;
};

// A NIC port's readings beyond its state: sysfs counters/ (symbol_error, link_downed, ...) and the GID table.
struct PortHealth {
  std::map<std::string, uint64_t> counters;
  std::vector<Gid> gids;  // configured entries only
  bool operator==(const PortHealth&) const = default;
};

}  // namespace autotune::topology
