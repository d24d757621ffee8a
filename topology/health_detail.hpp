#pragma once
// Shared by the files that make health findings (health.cpp, health_gpu.cpp, health_fabric.cpp): one sink
// that takes each finding's severity from the kinds table, so that a kind has one severity everywhere.

#include <string>
#include <vector>

#include "topology/health.hpp"

namespace autotune::topology::detail {

class FindingSink {
 public:
  explicit FindingSink(const Topology& t) : topology_(t) {}
  // `source` is where the reading came from ("nvml", "sysfs", ...); the record it was read from is added
  // when the node is not the live one.
  void add(std::string_view kind, std::string device, std::string reading, std::string_view source,
           std::string message);
  std::vector<HealthFinding> take() { return std::move(findings_); }

 private:
  const Topology& topology_;
  std::vector<HealthFinding> findings_;
};

std::string format_number(double v);  // "%g"
// Where the PCI tree and port states came from: "sysfs" for a live node, a recorded tree or a record of
// a live probe; "topology file" for hwloc / NCCL XML.
std::string_view tree_source(const Topology& t);

void gpu_findings(const Topology& t, FindingSink& sink);     // ECC, memory, clocks, power, NVLink, PCIe
void nic_findings(const Topology& t, FindingSink& sink);     // port state, rate, counters
void fabric_findings(const Topology& t, FindingSink& sink);  // RoCE GIDs, sockets, ACS, GPUDirect RDMA

}  // namespace autotune::topology::detail
