#pragma once
// Writing a probe result: a short human summary (a GPU x NIC matrix like `nvidia-smi topo -m`, features with
// their evidence, health, fingerprint), JSON with the stable shape documented in docs/probe.md, and NCCL
// topology XML usable as NCCL_TOPO_FILE. Pure functions: thread-safe.

#include <nlohmann/json.hpp>
#include <string>

#include "topology/analysis.hpp"
#include "topology/model.hpp"

namespace autotune::topology {

struct ProbeReport {
  const Topology& topology;
  const Analysis& analysis;
  std::string fingerprint;
};

std::string to_text(const ProbeReport& report);
std::string to_json(const ProbeReport& report);  // pretty-printed, ends with a newline; "schema": 1
std::string to_nccl_xml(const Topology& topology);
// One finding as the probe's and check's JSON write it: kind, severity, device, reading, source, message.
nlohmann::json finding_json(const HealthFinding& finding);

}  // namespace autotune::topology
