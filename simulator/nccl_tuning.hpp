#pragma once
// NCCL's tuning model as each release computes it: the latency and bandwidth tables of
// src/graph/tuning.cc (ncclTopoTuneModel) over the search's graphs (nccl_search.hpp), the time
// ncclTopoGetAlgoTime gives one collective, and the channel count src/enqueue.cc (topoGetAlgoInfo) lowers
// for small messages. Per release because the tables moved (2.22's Tree/Simple latency, 2.23's PAT, 2.2x's
// NVLS bandwidth). Values in float, as NCCL keeps them, so that near-ties break as in NCCL. Pure functions.

#include <cstdint>
#include <optional>
#include <string_view>

#include "nccl/vocabulary.hpp"
#include "simulator/nccl_search.hpp"
#include "simulator/sim_cluster.hpp"

namespace autotune::sim {

// The NCCL releases whose tables the model carries (those the realnccl tests hold it to).
enum class NcclRelease { v2_22, v2_29 };
inline constexpr NcclRelease kNewestNcclRelease = NcclRelease::v2_29;
// comm->nvlsChannels by default (NCCL_NVLS_NCHANNELS; enqueue.cc: "NVLS should not need more than 16
// channels to get peak BW").
inline constexpr int kNcclNvlsChannels = 16;
// "2.22.3" -> v2_22, "2.29.7" -> v2_29 (any patch level); nullopt for other releases.
std::optional<NcclRelease> parse_nccl_release(std::string_view version);

struct NcclTuning {
  NcclRelease release = kNewestNcclRelease;
  // [collective][algorithm][protocol]: microseconds, and algorithm bandwidth in GB/s (0: NCCL will not run
  // it).
  float latency[nccl::kNumCollectives][nccl::kNumAlgorithms][nccl::kNumProtocols] = {};
  float bandwidth[nccl::kNumCollectives][nccl::kNumAlgorithms][nccl::kNumProtocols] = {};
  // The same before NCCL's default enables (LL128 where it trusts it, NVLS, CollNet): what NCCL_PROTO or
  // NCCL_ALGO naming the combination gets.
  float forced_bandwidth[nccl::kNumCollectives][nccl::kNumAlgorithms][nccl::kNumProtocols] = {};
  int max_threads[nccl::kNumAlgorithms][nccl::kNumProtocols] = {};
  int64_t thread_threshold[nccl::kNumAlgorithms][nccl::kNumProtocols] = {};
  int comm_channels = 1;  // comm->nChannels
  int nvls_channels = 0;  // comm->nvlsChannels
};

// The tables for `c` (its channel limit already applied to c.max_channels) from its search.
NcclTuning tune_model(const SimCluster& c, const NcclSearch& search, NcclRelease release);
// ncclTopoGetAlgoTime for one collective alone: microseconds, or -1 where NCCL's bandwidth is 0 (by
// default; `forced`: as when NCCL_ALGO/NCCL_PROTO name it).
float algo_time_us(const NcclTuning& t, const SimCluster& c, nccl::Collective coll, nccl::Algorithm a,
                   nccl::Protocol p, uint64_t bytes, bool forced = false);
// topoGetAlgoInfo: the most channels NCCL gives `bytes` with this algorithm and protocol.
int enqueue_channels(const NcclTuning& t, nccl::Algorithm a, nccl::Protocol p, uint64_t bytes);
// The channels the collective then spans when it is planned alone (scheduleCollTasksToPlan: its traffic cut
// into cells of 32 KiB of traffic, spread evenly over those channels, byte data): what NCCL's TUNING line
// logs as channel{Lo..Hi}. `bytes` as the tuner sees them (AllGather's and ReduceScatter's whole buffer).
int planned_channels(const NcclTuning& t, nccl::Collective coll, nccl::Algorithm a, nccl::Protocol p,
                     uint64_t bytes, int ranks);

}  // namespace autotune::sim
