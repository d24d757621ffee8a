#pragma once
// The one health gate before a calibration: what `tune` knows about the nodes it is about to measure (each
// node's findings, from its probe and, where `nccl-autotune check` measured them, from its baselines) and
// what it does about a node with a blocking finding: refuse (InputError, exit 2, the nodes named), leave
// the node out (--exclude-unhealthy, recorded in the profile) or go on regardless (--ignore-health, also
// recorded). The probed node's own findings and check's per-node results come in the same form, so one gate
// serves both. Value types and pure functions: thread-safe.

#include <map>
#include <string>
#include <vector>

#include "topology/health.hpp"

namespace autotune::check {

struct ClusterHealth {
  std::string checked_by;  // "check (simulated)", "check (measured)": for notes and provenance
  std::vector<topology::NodeHealth> nodes;  // in the job's node order
  // NCCL_IB_GID_INDEX and NCCL_SOCKET_IFNAME as every node's probe chose them (topology/fabric_setup.hpp),
  // where all nodes agree: the profile's [env] gets them.
  std::map<std::string, std::string> fabric_env;
};

struct HealthPolicy {
  bool ignore = false;  // calibrate on blocking nodes, saying so (tune's --ignore-health does not check)
  bool exclude_unhealthy = false;  // --exclude-unhealthy: calibrate without the blocking nodes
};

struct HealthDecision {
  std::vector<int> excluded;               // nodes left out, ascending
  std::vector<std::string> excluded_text;  // per excluded node, describe_blocking's brief form
  std::string summary;                     // one line for the profile's provenance
  // Every finding on every checked node, blocking or not ("node 3 (h3): mlx5_1 nic_bandwidth_low (block):
  // ..."): the profile's provenance keeps them, so a rule can be judged by the nodes it was measured on.
  std::vector<std::string> findings;
  std::vector<std::string> notes;  // said beside the result
};

// A node and its blocking findings: "node 3 (h3): mlx5_1 nic_bandwidth_low, GPU2 gpu_bandwidth_low", or
// with each finding's message when `detailed` (what to do, for the error that refuses the cluster).
std::string describe_blocking(const topology::NodeHealth& node, bool detailed = false);

// One line per finding of the node: "node 3 (h3): mlx5_1 nic_bandwidth_low (block): <message>".
std::vector<std::string> describe_findings(const topology::NodeHealth& node);

// Throws InputError("<health>", 0, ...) naming every blocking node, and what to do, when a node blocks and
// the policy neither ignores nor excludes; also when both flags are set, or when excluding would leave no
// node. Nodes without blocking findings always pass; their warnings go into the notes.
HealthDecision decide_on_health(const ClusterHealth& health, const HealthPolicy& policy);

}  // namespace autotune::check
