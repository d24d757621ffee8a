#include "topology/health.hpp"

#include <algorithm>
#include <cstdio>

#include "topology/health_detail.hpp"

namespace autotune::topology {
namespace {

using enum Severity;

constexpr const char* kDcgm = "NVIDIA DCGM health watches (DcgmHealthWatch.cpp, DcgmGpuHardwareLimits.h)";
constexpr const char* kIbDiags = "infiniband-diags ibcheckerrs default thresholds (rdma-core)";
constexpr const char* kNcclIb = "NCCL 2.28 net_ib.cc (GID selection, GPUDirect RDMA checks)";

// The table docs/health.md reproduces, grouped as findings are made: GPUs, NVLink, PCIe, NICs, fabric, DCGM.
constexpr FindingKind kKinds[] = {
    {"ecc_uncorrected", block, "volatile uncorrected (double-bit) ECC errors > 0", kDcgm},
    {"retired_pages_limit", block, "retired pages (single- plus double-bit) >= 63", kDcgm},
    {"retired_pages_pending", warn, "a page retirement is pending (takes effect at the next GPU reset)",
     kDcgm},
    {"row_remap_failed", block, "a row remapping failed", kDcgm},
    {"row_remap_pending", warn, "a row remapping is pending (takes effect at the next GPU reset)",
     "NVIDIA GPU memory error management (row remapping)"},
    {"clock_throttled", block,
     "clock-event reasons HW slowdown, HW thermal, SW thermal or HW power brake are active",
     "NVML clock-event reasons (these cut clocks by half or more); DCGM warns on any thermal violation"},
    {"clock_power_capped", warn, "clock-event reason SW power cap is active", "NVML clock-event reasons"},
    {"sm_clock_low", warn,
     "SM clock below 70% of its maximum while the GPU is not idle and no slowdown or power cap explains it",
     "project's own (no vendor threshold)"},
    {"temperature_high", block, "GPU temperature at or above NVML's slowdown threshold",
     "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN"},
    {"power_limit_reduced", warn, "enforced power limit below the default power limit",
     "NVML power management limits"},
    {"persistence_mode_off", warn, "persistence mode disabled",
     "NVIDIA driver persistence guidance (nvidia-persistenced)"},
    {"mixed_gpu_models", warn, "GPUs of more than one model in the node", "project's own"},
    {"nvlink_down", block, "an NVLink is not active", kDcgm},
    {"nvlink_errors", block,
     "NVLink replay or recovery errors grew during the sample, or CRC errors grew at >= 100/s", kDcgm},
    {"nvlink_error_history", warn,
     "NVLink replay or recovery error totals > 0 (since the driver loaded; not growing during the sample)",
     kDcgm},
    {"pcie_width_degraded", block, "PCIe link width below the device's maximum",
     "NVML / sysfs current vs maximum link width"},
    {"pcie_gen_degraded", warn,
     "PCIe link generation or speed below the maximum while the GPU is not idle (idle GPUs lower it)",
     "NVML / sysfs current vs maximum link generation"},
    {"pcie_replay_rate", warn, "more than 8 PCIe replays per minute during the sample", kDcgm},
    {"nic_not_active", block, "a NIC has no ACTIVE port", "NCCL guidance: all InfiniBand NICs active"},
    {"nic_port_not_active", warn, "a port is not ACTIVE while another port of the same NIC is",
     "NCCL guidance: all InfiniBand NICs active"},
    {"nic_rate_degraded", block,
     "an active port runs below the fastest port of the same NIC model in the node", "sysfs port rate"},
    {"nic_rate_below_max", warn, "every port of a NIC model runs below the model's maximum rate",
     "NVIDIA ConnectX product rates"},
    {"ib_link_errors", warn,
     "symbol_error, link_error_recovery, link_downed or local_link_integrity_errors >= 10", kIbDiags},
    {"ib_receive_errors", warn,
     "port_rcv_errors or excessive_buffer_overrun_errors >= 10; port_rcv_remote_physical_errors, "
     "port_rcv_switch_relay_errors, port_xmit_discards, port_xmit_constraint_errors, "
     "port_rcv_constraint_errors or VL15_dropped >= 100",
     kIbDiags},
    {"roce_gid_v1_only", warn, "a RoCE port has routable GIDs of RoCE v1 only", kNcclIb},
    {"roce_gid_ipv6_only", warn, "a RoCE port's RoCE v2 GIDs are IPv6 only (NCCL looks for IPv4 by default)",
     kNcclIb},
    {"roce_gid_link_local_only", warn, "a RoCE port has only link-local (fe80::) GIDs", kNcclIb},
    {"roce_gid_index_differs", warn, "the RoCE v2 IPv4-mapped GID is not at one index on every port",
     kNcclIb},
    {"socket_interface_missing", warn,
     "no interface up with an address other than the loopback and container or VM bridges",
     "NCCL 2.28 socket.cc (interface selection)"},
    {"socket_interface_bridge", warn,
     "NCCL's own choice of socket interface would be a container or VM bridge",
     "NCCL 2.28 socket.cc (interface selection)"},
    {"pcie_acs_redirect", block,
     "ACS P2P request redirect, completion redirect or egress control on a PCIe bridge above a GPU or NIC",
     "NCCL troubleshooting guide (PCI ACS); Linux disable_acs_redir"},
    {"gdr_unavailable", warn,
     "no peer-memory module and no dma-buf support on a node with GPUs and RDMA NICs", kNcclIb},
    {"dcgm_diag_fail", block, "a `dcgmi diag` test failed", "NVIDIA DCGM diagnostics"},
    {"dcgm_diag_warn", warn, "a `dcgmi diag` test warned, or its output could not be read",
     "NVIDIA DCGM diagnostics"},
};

void dcgm_findings(const Topology& t, detail::FindingSink& sink) {
  if (!t.health.dcgm || !t.health.dcgm->ran) return;
  const DcgmDiag& d = *t.health.dcgm;
  if (!d.why.empty())
    sink.add("dcgm_diag_warn", "node", d.why, "dcgmi",
             "dcgmi diag -r " + std::to_string(d.level) + ": " + d.why);
  for (const auto& r : d.results) {
    if (r.status != "fail" && r.status != "warn") continue;
    const std::string reading = r.test + ": " + r.status + (r.detail.empty() ? "" : " (" + r.detail + ")");
    sink.add(r.status == "fail" ? "dcgm_diag_fail" : "dcgm_diag_warn", r.device, reading, "dcgmi",
             r.device + ": dcgmi diag -r " + std::to_string(d.level) + " " + reading);
  }
}

}  // namespace

namespace detail {

void FindingSink::add(std::string_view kind, std::string device, std::string reading, std::string_view source,
                      std::string message) {
  const FindingKind* k = find_kind(kind);
  std::string where(source);
  if (!topology_.origin.empty() && topology_.origin != "live") where += " (" + topology_.origin + ")";
  findings_.push_back({std::string(kind), k ? k->severity : Severity::block, std::move(device),
                       std::move(reading), std::move(where), std::move(message)});
}

std::string_view tree_source(const Topology& t) {
  return t.from_live_node || t.origin == "recorded sysfs tree" ? "sysfs" : "topology file";
}

std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace detail

std::string_view severity_name(Severity s) {
  return s == Severity::block ? "block" : "warn";
}

std::span<const FindingKind> finding_kinds() {
  return kKinds;
}

const FindingKind* find_kind(std::string_view kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

std::vector<HealthFinding> health_findings(const Topology& t) {
  detail::FindingSink sink(t);
  detail::gpu_findings(t, sink);
  detail::nic_findings(t, sink);
  detail::fabric_findings(t, sink);
  dcgm_findings(t, sink);
  return sink.take();
}

bool may_calibrate(const std::vector<HealthFinding>& findings) {
  return std::none_of(findings.begin(), findings.end(),
                      [](const HealthFinding& f) { return f.severity == Severity::block; });
}

bool may_calibrate(const NodeHealth& node) {
  return may_calibrate(node.findings);
}

std::string_view node_status(const std::vector<HealthFinding>& findings) {
  if (findings.empty()) return "ok";
  return may_calibrate(findings) ? "warn" : "block";
}

}  // namespace autotune::topology
