#pragma once
// From baselines to findings: each node's figures against the median of the job (a device below
// `block` of the median blocks, below `warn` warns) and against what its hardware can do (below `hardware`
// of the probe's figure warns), with the outlier named: the GPU both of whose pairs were slow, the NIC of a
// rail both of whose node pairs were slow (unless its GPU was slow: then that GPU), or the node when no one
// device explains a slow node all-reduce. Kinds and thresholds are check_kinds(), which docs/health.md
// reproduces (a test keeps the two equal). Pure functions: thread-safe.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "check/baselines.hpp"
#include "topology/health.hpp"

namespace autotune::check {

struct Thresholds {
  double warn = 0.90;      // of the median
  double block = 0.80;     // of the median
  double hardware = 0.60;  // of what the probe says the hardware can do
};

struct CheckKind {
  std::string_view kind;
  std::string_view severity;   // "block below 80% of the median, warn below 90%", "warn"
  std::string_view threshold;  // what is compared with what
};
std::span<const CheckKind> check_kinds();

// Per node, its findings from the measurements. `source` names how they were measured ("check: simulated",
// "check: measured"); `hardware` has one entry per node.
std::vector<std::vector<topology::HealthFinding>> baseline_findings(
    const Baselines& baselines, const std::vector<HardwareFigures>& hardware, const Thresholds& thresholds,
    const std::string& source);

}  // namespace autotune::check
