#pragma once
// Writing a probe result: a short human summary (a GPU x NIC matrix like `nvidia-smi topo -m`, features with
// their evidence, health, fingerprint), JSON with the stable shape documented in docs/probe.md, and NCCL
// topology XML usable as NCCL_TOPO_FILE. Pure functions: thread-safe.

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

}  // namespace autotune::topology
