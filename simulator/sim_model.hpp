#pragma once
// The simulator's performance model: a stand-in for NCCL on machines without GPUs, never a substitute for
// measuring. Two views of one cluster:
//  - NCCL's estimate: NCCL's own cost model (latency + bytes / bandwidth per algorithm and protocol, hardware
//    latencies per hop, per-generation bandwidth caps, channels; tables in NCCL-FACTS.md). nccl_default() is
//    what NCCL would pick with nothing forced: the smallest estimate.
//  - The simulated truth: the same formula with seeded per-(collective, algorithm, protocol) deviations in
//    latency and bandwidth plus a per-channel cost NCCL's model ignores, so that, as on real systems, NCCL's
//    choice is sometimes not the fastest. That is what a tuner has to find; tests of the search engine
//    compare their rules against best_true().
// Process-wide settings are part of the model: NCCL_IB_HCA (which NICs, rail mismatch), NCCL_CROSS_NIC (a
// small seeded effect), NCCL_MIN/MAX_NCHANNELS, NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE.
// Faults (SimCluster::faults) change the truth, not NCCL's estimate, and only for communicators that span
// the sick node and hold the sick device: every channel crosses every node of a ring or tree and NCCL
// splits data evenly over channels and NICs, so the slowest link paces the collective. A NIC at fraction f
// of its rate (when NCCL_IB_HCA keeps it and this communicator's GPUs use it) scales the network bandwidth
// by f; a GPU whose NVLinks run at f scales the intra-node bandwidth by f (when the communicator has more
// than one of the node's GPUs); a GPU whose clock is at f moves data at f of its rate over NVLink and to
// its NIC alike. Latencies are left alone.
// Immutable after construction; const methods are safe to call from several threads.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "runners/runner.hpp"
#include "simulator/sim_cluster.hpp"

namespace autotune::sim {

using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;
using runners::Candidate;

// How the truth strays from NCCL's estimate. Configurable so tests can switch it off (truth == estimate).
struct SimDeviations {
  bool enabled = true;
  uint64_t seed = 42;       // independent of the noise seed: the same "machine" under different noise
  double magnitude = 0.15;  // latency factors in [1-m, 1+m], bandwidth factors in [1-m, 1+m/2]
  double channel_overhead_us = 0.05;  // per channel and operation: why fewer channels win small messages
};

// A fully resolved choice: what NCCL would actually run.
struct SimChoice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  int channels = 1;
  bool operator==(const SimChoice&) const = default;
};

class SimModel {
 public:
  // Throws InputError("<env NAME>", 0, ...) for a process setting NCCL would reject.
  SimModel(SimCluster cluster, const std::map<std::string, std::string>& process_env = {},
           SimDeviations deviations = {});

  // The cluster after the process settings (NICs left by NCCL_IB_HCA, channel limits, NVLS/CollNet switches).
  const SimCluster& cluster() const { return cluster_; }
  const SimDeviations& deviations() const { return deviations_; }
  // Inter-node bandwidth per node after NIC selection, rail mismatch and cross-NIC, GB/s (0 on one node).
  double effective_net_gbps() const { return net_gbps_; }
  // What the spanned nodes' faults leave of the intra-node and network bandwidth (1 = healthy).
  double fault_intra_factor() const { return fault_intra_; }
  double fault_net_factor() const { return fault_net_; }

  // Why this combination cannot run on this cluster; nullopt when it can.
  std::optional<std::string> unsupported(Collective c, Algorithm a, Protocol p) const;
  // Forced LL128 where NCCL would not enable it (no NVLink): the data comes out wrong.
  bool corrupts(Algorithm a, Protocol p) const;

  // NCCL's estimate in microseconds; channels 0 = the communicator's maximum. Requires a supported
  // combination.
  double nccl_estimate_us(Collective c, uint64_t bytes, Algorithm a, Protocol p, int channels = 0) const;
  // What NCCL picks with nothing forced (smallest estimate; LL128 only where safe), and its channel count.
  SimChoice nccl_default(Collective c, uint64_t bytes) const;
  // NCCL's cost table for one call as NCCL hands it to a tuner plugin, [algorithm][protocol] row-major:
  // nccl_estimate_us for what NCCL would consider here (supported, and LL128 only where safe), -1
  // (NCCL_ALGO_PROTO_IGNORE) elsewhere. Its smallest entry is nccl_default's choice (ties to the lower
  // index).
  std::array<float, nccl::kNumAlgorithms * nccl::kNumProtocols> cost_table(Collective c,
                                                                           uint64_t bytes) const;
  // What runs for a candidate: forced parts as given, the rest chosen by NCCL's estimate. nullopt (with the
  // reason in *why) when the forced part cannot run here.
  std::optional<SimChoice> resolve(Collective c, uint64_t bytes, const Candidate& candidate,
                                   std::string* why = nullptr) const;
  // The simulated truth, noise-free, microseconds.
  double true_time_us(Collective c, uint64_t bytes, const SimChoice& choice) const;
  // The fastest choice in truth over every supported, safe algorithm/protocol and channel counts 1..max
  // (powers of two and the maximum).
  SimChoice best_true(Collective c, uint64_t bytes) const;

 private:
  double latency_us(Collective c, Algorithm a, Protocol p) const;
  // `truth`: with the spanned nodes' faults (what runs), else as NCCL estimates it.
  double bus_gbps(Collective c, Algorithm a, Protocol p, int channels, bool truth) const;
  void apply_faults(const std::set<std::string>& used_nics);
  int default_channels(uint64_t bytes) const;
  double deviation(uint64_t tag, Collective c, Algorithm a, Protocol p) const;

  SimCluster cluster_;
  SimDeviations deviations_;
  double net_gbps_ = 0.0;
  double fault_intra_ = 1.0, fault_net_ = 1.0;
  bool collnet_enabled_ = false;
};

}  // namespace autotune::sim
