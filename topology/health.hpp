#pragma once
// Health findings: what a node's readings (topology/health_readings.hpp) and shape say about whether a
// calibration may run on it. Every finding names its kind, its severity (block: calibration must not run on
// this node; warn), the device (GPU2, mlx5_1 port 1, NVLink 7 of GPU3, a PCIe port, node), the reading
// and where the reading came from. Kinds, thresholds and the vendor guidance behind them are the table of
// finding_kinds(), which docs/health.md reproduces (a test keeps the two equal). A finding is made only
// from what was read: a reading that is absent (no driver, no permission, a file without it) says nothing.
// `check` and `tune` consume this per node (NodeHealth). Pure functions of the model: thread-safe.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topology/model.hpp"

namespace autotune::topology {

enum class Severity { warn, block };
std::string_view severity_name(Severity s);  // "warn", "block"

struct HealthFinding {
  std::string kind;  // one of finding_kinds()
  Severity severity = Severity::warn;
  std::string device;   // "GPU2", "mlx5_1 port 1", "NVLink 7 of GPU3", "PCIe port 0000:17:00.0", "node"
  std::string reading;  // what was read: "volatile uncorrected ECC errors: 3"
  std::string source;   // "nvml", "sysfs", "proc", "dcgmi", "topology"; ", recorded in FILE" when not live
  std::string message;  // one line a person can act on: the device, the reading, the threshold, what to do
  bool operator==(const HealthFinding&) const = default;
};

struct FindingKind {
  std::string_view kind;
  Severity severity;
  std::string_view threshold;  // when it fires
  std::string_view source;     // whose guidance the threshold follows
};

// Every kind health_findings() can report, in the order findings are made.
std::span<const FindingKind> finding_kinds();
const FindingKind* find_kind(std::string_view kind);

// The findings of one node, GPUs first, then NVLink, PCIe, NICs, fabric set-up and DCGM.
std::vector<HealthFinding> health_findings(const Topology& topology);

// One node of an allocation, as `check` reports it and `tune` gates on it.
struct NodeHealth {
  int node = 0;      // index within the allocation
  std::string host;  // where known
  std::vector<HealthFinding> findings;
};

// Whether a calibration may run on a node with these findings: none of them blocks.
bool may_calibrate(const std::vector<HealthFinding>& findings);
bool may_calibrate(const NodeHealth& node);
// "ok" (no findings), "warn" (findings, none blocking) or "block".
std::string_view node_status(const std::vector<HealthFinding>& findings);

}  // namespace autotune::topology
