#pragma once
// A short, stable name for the kind of node: a hash of what decides collective performance (GPU model and
// count, NVLink shape and links, NIC models, count, link layer and fabric speed, GPU-NIC path classes, NUMA
// layout, NCCL major.minor) and of nothing that differs between two nodes of the same kind (bus ids, GUIDs,
// serials, hostnames, device names) or between a healthy node and a sick one of that kind (port state, a
// port or PCIe link trained below its rate, NVLinks down: those are health findings, see
// topology/health.hpp). Pure and cheap (no analysis of features): the launcher calls it on its fast path.

#include <string>

#include "topology/model.hpp"

namespace autotune::topology {

// 16 lower-case hex digits (FNV-1a 64 of fingerprint_description).
std::string fingerprint(const Topology& topology, int nccl_major_minor /* e.g. 228 */);

// The canonical text that is hashed, one fact per line, for debugging "why do these two differ".
std::string fingerprint_description(const Topology& topology, int nccl_major_minor);

}  // namespace autotune::topology
