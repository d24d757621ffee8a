#pragma once
// The simulator's performance model: a stand-in for NCCL on machines without GPUs, never a substitute for
// measuring. Two views of one cluster:
//  - NCCL's estimate (nccl_estimate.hpp): NCCL's own cost model; nccl_default() is what NCCL would pick with
//    nothing forced: the smallest estimate.
//  - The simulated truth (here): a hardware model fitted to published nccl-tests figures
//    (hardware_model.hpp, `ctest -L fidelity`): NCCL's latencies, the bandwidth each algorithm, protocol and
//    channel count really reaches, the pipeline fill, under the faults; plus seeded per-(collective,
//    algorithm, protocol) deviations in latency and in the bandwidth the published figures do not pin down
//    (LL, LL128), and a per-channel cost NCCL's model ignores. So, as on real systems, NCCL's choice is
//    sometimes not the fastest: that is what a tuner has to find; tests of the search engine compare their
//    rules against best_true().
// Process-wide settings are part of the model: NCCL_IB_HCA (which NICs, rail mismatch), NCCL_CROSS_NIC (a
// small seeded effect), NCCL_MIN/MAX_NCHANNELS, NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE, and NCCL_ALGO /
// NCCL_PROTO, which leave NCCL (and a tuner's forcing) only the algorithms and protocols they select; the
// point-to-point settings (p2p_model.hpp), of which NCCL_NET_GDR_LEVEL slows collectives too, and an
// NCCL_BUFFSIZE above NCCL's 4 MiB lengthens the Simple protocol's pipeline fill.
// Faults (SimCluster::faults) change the truth, not NCCL's estimate, and only for communicators that span
// the sick node and hold the sick device: every channel crosses every node of a ring or tree and NCCL
// splits data evenly over channels and NICs, so the slowest link paces the collective. A NIC at fraction f
// of its rate (when NCCL_IB_HCA keeps it and this communicator's GPUs use it) scales the network bandwidth
// by f; a GPU whose NVLinks run at f scales the intra-node bandwidth by f (when the communicator has more
// than one of the node's GPUs); a GPU whose clock is at f moves data at f of its rate over NVLink and to
// its NIC alike. Latencies are left alone.
// Immutable after construction; const methods are safe to call from several threads.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "nccl/algo_proto_spec.hpp"
#include "simulator/hardware_model.hpp"
#include "simulator/nccl_estimate.hpp"
#include "simulator/p2p_model.hpp"

namespace autotune::sim {

// How the truth strays, seeded, from the fitted hardware model. Configurable so tests can switch it off
// (truth == the fitted model).
struct SimDeviations {
  bool enabled = true;
  uint64_t seed = 42;  // independent of the noise seed: the same "machine" under different noise
  // Latency factors in [1-m, 1+m]; LL and LL128 bandwidth factors in [1-m, 1+m/2]; Simple's, which the
  // published figures fix, in [1-m/10, 1+m/10].
  double magnitude = 0.15;
  double channel_overhead_us = 0.05;  // per channel and operation: why fewer channels win small messages
};

// A communicator's cluster once the process settings are applied, and what its network share is.
struct ProcessView {
  SimCluster cluster;
  std::optional<nccl::AlgoSpec> algo;    // NCCL_ALGO
  std::optional<nccl::ProtoSpec> proto;  // NCCL_PROTO
  double net_gbps = 0.0;                 // inter-node bandwidth per node after NIC selection and cross-NIC
  std::set<std::string> used_nics;       // the NICs this communicator's GPUs use
  P2pSettings p2p;                       // the point-to-point settings (p2p_model.hpp)
};

// The NCCL environment variables the model reads (the rest do not change performance here): what a
// simulated run takes from its process environment, as NCCL would.
std::vector<std::string> modelled_env_names();

class SimModel {
 public:
  // Throws InputError("<env NAME>", 0, ...) for a process setting NCCL would reject.
  SimModel(SimCluster cluster, const std::map<std::string, std::string>& process_env = {},
           SimDeviations deviations = {});

  // The cluster after the process settings (NICs left by NCCL_IB_HCA, channel limits, NVLS/CollNet switches).
  const SimCluster& cluster() const { return estimate_.cluster(); }
  const SimDeviations& deviations() const { return deviations_; }
  // NCCL's own cost model for this communicator: its estimates and its choice.
  const NcclEstimate& nccl() const { return estimate_; }
  // Inter-node bandwidth per node after NIC selection, rail mismatch and cross-NIC, GB/s (0 on one node).
  double effective_net_gbps() const { return estimate_.net_gbps(); }
  // What the spanned nodes' faults leave of the intra-node and network bandwidth (1 = healthy).
  double fault_intra_factor() const { return fault_intra_; }
  double fault_net_factor() const { return fault_net_; }

  // NCCL's side, as NcclEstimate says it, narrowed by NCCL_ALGO and NCCL_PROTO as NCCL narrows it.
  std::optional<std::string> unsupported(nccl::Collective c, nccl::Algorithm a, nccl::Protocol p) const;
  bool corrupts(nccl::Algorithm a, nccl::Protocol p) const { return estimate_.corrupts(a, p); }
  double nccl_estimate_us(nccl::Collective c, uint64_t bytes, nccl::Algorithm a, nccl::Protocol p,
                          int channels = 0) const {
    return estimate_.estimate_us(c, bytes, a, p, channels);
  }
  SimChoice nccl_default(nccl::Collective c, uint64_t bytes) const;
  CostTable cost_table(nccl::Collective c, uint64_t bytes) const;
  std::optional<SimChoice> resolve(nccl::Collective c, uint64_t bytes, const runners::Candidate& candidate,
                                   std::string* why = nullptr) const;

  // The simulated truth, noise-free, microseconds.
  double true_time_us(nccl::Collective c, uint64_t bytes, const SimChoice& choice) const;
  // A point-to-point operation's simulated truth, noise-free, microseconds (p2p_model.hpp): no algorithm,
  // protocol or channel count to choose, only the process-wide settings.
  double p2p_time_us(nccl::Operation op, uint64_t bytes) const;
  double p2p_traffic_time_us(const P2pTraffic& t) const;  // one rank's traffic (p2p_model.hpp)
  const P2pSettings& p2p_settings() const { return p2p_; }
  // The fastest choice in truth over every supported, safe algorithm/protocol and channel counts 1..max
  // (powers of two and the maximum).
  SimChoice best_true(nccl::Collective c, uint64_t bytes) const;

 private:
  SimModel(ProcessView view, SimDeviations deviations);
  void apply_faults(const std::set<std::string>& used_nics);
  // Bus bandwidth in truth of a large message, before the seeded deviations: the links as the faults leave
  // them.
  double true_bus_gbps(nccl::Collective c, const SimChoice& choice) const;
  double deviation(uint64_t tag, nccl::Collective c, nccl::Algorithm a, nccl::Protocol p) const;

  // Whether NCCL_ALGO / NCCL_PROTO leave this combination to NCCL (LL128 where unsafe only when named).
  bool selected(nccl::Collective c, nccl::Algorithm a, nccl::Protocol p) const;

  SimDeviations deviations_;
  std::optional<nccl::AlgoSpec> algo_;
  std::optional<nccl::ProtoSpec> proto_;
  NcclEstimate estimate_;
  double fault_intra_ = 1.0, fault_net_ = 1.0;
  Links links_;
  P2pSettings p2p_;
};

}  // namespace autotune::sim
