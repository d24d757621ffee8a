#pragma once
// NCCL's own cost model over one simulated communicator: what NCCL estimates for each algorithm and protocol
// (its search's graphs and its release's tuning tables: nccl_search.hpp, nccl_tuning.hpp), which of them it
// would consider at all, and therefore what it picks with nothing forced, on how many channels.
// This is the simulator's picture of NCCL's *decision*, held to real NCCL's choices; how fast a choice
// really runs is the simulated truth's business (sim_model.hpp). Immutable after construction; const methods
// are safe to call from several threads.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "runners/runner.hpp"
#include "simulator/nccl_search.hpp"
#include "simulator/nccl_tuning.hpp"
#include "simulator/sim_cluster.hpp"

namespace autotune::sim {

// A fully resolved choice: what NCCL would actually run.
struct SimChoice {
  nccl::Algorithm algorithm = nccl::Algorithm::ring;
  nccl::Protocol protocol = nccl::Protocol::simple;
  int channels = 1;
  bool operator==(const SimChoice&) const = default;
};

using CostTable = std::array<float, nccl::kNumAlgorithms * nccl::kNumProtocols>;

class NcclEstimate {
 public:
  // `cluster` after the process settings (NICs, channel limits, NVLS and CollNet switches); `net_gbps` the
  // inter-node bandwidth per node NCCL sees (0 on one node); `release`: whose tables.
  NcclEstimate(SimCluster cluster, double net_gbps, NcclRelease release = kNewestNcclRelease);

  const SimCluster& cluster() const { return cluster_; }
  double net_gbps() const { return net_gbps_; }

  // Why this combination cannot run on this cluster; nullopt when it can.
  std::optional<std::string> unsupported(nccl::Collective c, nccl::Algorithm a, nccl::Protocol p) const;
  // Forced LL128 where NCCL would not enable it (no NVLink): the data comes out wrong.
  bool corrupts(nccl::Algorithm a, nccl::Protocol p) const;

  // NCCL's estimate in microseconds (ncclTopoGetAlgoTime), as NCCL computes it when the combination is
  // forced; fewer channels than NCCL would run stretch the transfer. Infinity where NCCL has no bandwidth
  // for it. Requires a supported combination.
  double estimate_us(nccl::Collective c, uint64_t bytes, nccl::Algorithm a, nccl::Protocol p,
                     int channels = 0) const;
  // The per-hop latency of one operation, microseconds, from NCCL's hardware latency tables: what the
  // simulated truth (sim_model.hpp) pays per call, kept apart from NCCL's release-specific estimate.
  double latency_us(nccl::Collective c, nccl::Algorithm a, nccl::Protocol p) const;
  const NcclSearch& search() const { return search_; }
  const NcclTuning& tuning() const { return tuning_; }
  // What NCCL picks with nothing forced (smallest estimate; LL128 only where safe), and its channel count.
  SimChoice default_choice(nccl::Collective c, uint64_t bytes) const;
  // What runs for a candidate: forced parts as given, the rest chosen by NCCL's estimate. nullopt (with the
  // reason in *why) when the forced part cannot run here.
  std::optional<SimChoice> resolve(nccl::Collective c, uint64_t bytes, const runners::Candidate& candidate,
                                   std::string* why = nullptr) const;
  // NCCL's cost table for one call as NCCL hands it to a tuner plugin, [algorithm][protocol] row-major:
  // estimate_us for what NCCL would consider here (supported, and LL128 only where safe), -1
  // (NCCL_ALGO_PROTO_IGNORE) elsewhere. Its smallest entry is default_choice's (ties to the lower index).
  CostTable cost_table(nccl::Collective c, uint64_t bytes) const;

 private:
  // NCCL's estimate with its default enables (-1: it would not consider it).
  double default_estimate_us(nccl::Collective c, uint64_t bytes, nccl::Algorithm a, nccl::Protocol p) const;

  SimCluster cluster_;
  double net_gbps_ = 0.0;
  NcclSearch search_;
  NcclTuning tuning_;
};

}  // namespace autotune::sim
