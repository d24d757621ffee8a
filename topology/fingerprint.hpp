#pragma once
// A short, stable name for the kind of node: a hash of what decides collective performance (GPU model and
// count, NVLink shape and links, NIC models, count, link layer and fabric speed, GPU-NIC path classes, NUMA
// layout, NCCL major.minor) and of nothing that differs between two nodes of the same kind (bus ids, GUIDs,
// serials, hostnames, device names) or between a healthy node and a sick one of that kind (port state, a
// port or PCIe link trained below its rate, NVLinks down: those are health findings, see
// topology/health.hpp). Pure and cheap (no analysis of features): the launcher calls it on its fast path.

#include <string>
#include <vector>

#include "topology/model.hpp"

namespace autotune::topology {

// 16 lower-case hex digits (FNV-1a 64 of the facts, each ending in a line break).
std::string fingerprint(const Topology& topology, int nccl_major_minor /* e.g. 228 */);

// What is hashed, one fact per line in a canonical order, each opening with its kind ("gpu 8x NVIDIA H100
// 80GB HBM3 sm90 nvlink switchx18", "nccl 2.28"). Profiles keep them, so that a mismatch can say what
// differs.
std::vector<std::string> fingerprint_facts(const Topology& topology, int nccl_major_minor);

// What differs between the facts a profile was calibrated with and a node's, one sentence per kind of fact
// ("GPUs: calibrated 8x NVIDIA H100 ..., this node 8x NVIDIA H200 ..."); empty when they are the same.
std::vector<std::string> fingerprint_differences(const std::vector<std::string>& calibrated,
                                                 const std::vector<std::string>& here);

}  // namespace autotune::topology
