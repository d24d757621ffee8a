#include "simulator/nccl_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simulator/sim_constants.hpp"

namespace autotune::sim {

using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;
using runners::Candidate;

namespace {

constexpr int kSimple = 2;
constexpr int kNvls = 4, kNvlsTree = 5;

// NCCL's default tables (NCCL-FACTS.md). [algorithm][LL, LL128, Simple], microseconds.
constexpr double kBaseLat[7][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0},
                                   {0, 0, 0},        {0, 0, 0},        {8, 8, 8}};
constexpr double kHwLatNvlink[7][3] = {{.6, 1.25, 4}, {.6, 1.9, 3.4}, {.6, 1.25, 4}, {.6, 1.25, 4},
                                       {0, 0, 25},    {0, 0, 25},     {0, 0, 4}};
constexpr double kHwLatPci[7][3] = {{1, 1.9, 4}, {1, 2.5, 5.7}, {1, 1.9, 4}, {1, 1.9, 4},
                                    {0, 0, 0},   {0, 0, 0},     {0, 0, 5.7}};
constexpr double kHwLatNet[7][3] = {{5, 8.5, 14}, {2.7, 4, 14}, {5, 8.5, 14}, {5, 8.5, 14},
                                    {0, 0, 18},   {0, 0, 20.9}, {0, 0, 14}};
// [Volta, Ampere, Hopper, Blackwell][1 node, 2 nodes, more]
constexpr double kLLMaxBw[4][3] = {{39, 39, 20.4}, {87.7, 22.5, 19.0}, {141, 45, 35}, {282, 90, 70}};
// Per-channel LL128 caps. Hopper's are NCCL's; the others are assumptions scaled by NVLink speed.
constexpr double kRingLL128PerCh[4] = {20.0, 20.0, 36.7, 73.4};
constexpr double kTreeLL128PerCh[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29}, {73.4, 73.4, 58}};
constexpr double kTreeSimplePerCh[4][3] = {{24, 24, 24}, {24, 24, 24}, {38.7, 41.4, 36}, {77, 82, 72}};

int ai(Algorithm a) {
  return static_cast<int>(a);
}
int pi(Protocol p) {
  return static_cast<int>(p);
}

double log2_ceil(int n) {
  return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n)));
}

// Why NVLS is out for this communicator, naming the first missing condition: the GPUs, the switches, the
// communicator's shape, or the driver's multicast (sim_cluster.cpp requires all four).
std::string nvls_missing(const SimCluster& c, const std::string& algo) {
  if (c.sm < 90) return algo + " needs Hopper (sm 90) or newer GPUs; these are sm " + std::to_string(c.sm);
  if (!c.nvswitch || !c.nvlink) return algo + " needs GPUs joined by NVSwitches; this node has none";
  if (c.gpus_per_node < 2)
    return algo + " needs more than one GPU per node in the communicator; this one has 1 per node";
  return algo + " needs CUDA multicast, which this node's driver does not offer";
}

}  // namespace

NcclEstimate::NcclEstimate(SimCluster cluster, double net_gbps, NcclRelease release)
    : cluster_(std::move(cluster)),
      net_gbps_(net_gbps),
      search_(search_graphs(cluster_)),
      tuning_(tune_model(cluster_, search_, release)) {}

std::optional<std::string> NcclEstimate::unsupported(Collective c, Algorithm a, Protocol p) const {
  if (!nccl::is_allowed(c, a, p))
    return std::string("NCCL does not run ") + std::string(nccl::nccl_name(c)) + " with " +
           std::string(nccl::nccl_name(a)) + "/" + std::string(nccl::nccl_name(p));
  if (cluster_.ranks() < 2) return std::string("one rank: NCCL does not consult the tuner");
  switch (a) {
    case Algorithm::nvls:
      if (!cluster_.nvls) return nvls_missing(cluster_, "NVLS");
      break;
    case Algorithm::nvls_tree:
      if (!cluster_.nvls) return nvls_missing(cluster_, "NVLSTree");
      if (cluster_.nodes < 2) return std::string("NVLSTree needs more than one node");
      break;
    case Algorithm::collnet_direct:
    case Algorithm::collnet_chain:
      // The missing hardware first: with no SHARP-capable NIC more nodes would not help.
      if (!cluster_.collnet) return std::string("CollNet needs SHARP-capable NICs and NCCL_COLLNET_ENABLE=1");
      if (cluster_.nodes < 2) return std::string("CollNet needs more than one node");
      break;
    case Algorithm::pat:
      if (cluster_.nodes < 2 || cluster_.gpus_per_node != 1)
        return std::string("PAT needs one GPU per node on more than one node");
      break;
    case Algorithm::tree:
    case Algorithm::ring:
      break;
  }
  return std::nullopt;
}

bool NcclEstimate::corrupts(Algorithm, Protocol p) const {
  return p == Protocol::ll128 && !cluster_.ll128_safe();
}

double NcclEstimate::latency_us(Collective c, Algorithm a, Protocol p) const {
  const int n = cluster_.ranks(), g = cluster_.gpus_per_node, nodes = cluster_.nodes;
  const double intra = cluster_.nvlink ? kHwLatNvlink[ai(a)][pi(p)] : kHwLatPci[ai(a)][pi(p)];
  const double net = kHwLatNet[ai(a)][pi(p)];
  const double base = kBaseLat[ai(a)][pi(p)];
  const bool allreduce = c == Collective::allreduce;
  switch (a) {
    case Algorithm::ring: {
      int passes = allreduce ? 2 : 1;
      int steps = passes * (n - 1);
      int inter_steps = nodes > 1 ? passes * (nodes - 1) : 0;
      return base + (steps - inter_steps) * intra + inter_steps * net;
    }
    case Algorithm::tree:
      return base + 2.0 * ((g - 1) * intra + log2_ceil(nodes) * net);
    case Algorithm::nvls:
      return kHwLatNvlink[kNvls][kSimple] + (nodes > 1 ? net : 0.0);
    case Algorithm::nvls_tree:
      return kHwLatNvlink[kNvlsTree][kSimple] + log2_ceil(nodes) * net;
    case Algorithm::collnet_direct:
      return base + 2.0 * intra + net;
    case Algorithm::collnet_chain:
      return base + 2.0 * (g - 1) * intra + net;
    case Algorithm::pat:
      return base + log2_ceil(nodes) * net;
  }
  return base;
}

double NcclEstimate::default_estimate_us(Collective c, uint64_t bytes, Algorithm a, Protocol p) const {
  return algo_time_us(tuning_, cluster_, c, a, p, bytes);
}

double NcclEstimate::estimate_us(Collective c, uint64_t bytes, Algorithm a, Protocol p, int channels) const {
  const double t = algo_time_us(tuning_, cluster_, c, a, p, bytes, true);
  if (t < 0.0) return std::numeric_limits<double>::infinity();
  const int own = enqueue_channels(tuning_, a, p, bytes);
  if (channels <= 0 || channels >= own) return t;
  // NCCL's estimate knows no channel count; fewer channels than it would run carry the bytes slower.
  const double latency = tuning_.latency[static_cast<int>(c)][ai(a)][pi(p)];
  return latency + (t - latency) * own / channels;
}

std::optional<SimChoice> NcclEstimate::resolve(Collective c, uint64_t bytes, const Candidate& cand,
                                               std::string* why) const {
  std::optional<SimChoice> best;
  double best_time = std::numeric_limits<double>::infinity();
  std::string reason;
  for (Algorithm a : nccl::kAllAlgorithms) {
    if (cand.algorithm && *cand.algorithm != a) continue;
    for (Protocol p : nccl::kAllProtocols) {
      if (cand.protocol && *cand.protocol != p) continue;
      if (auto r = unsupported(c, a, p)) {
        if (reason.empty()) reason = *r;
        continue;
      }
      // NCCL never picks LL128 itself where it is unsafe; only an explicit force gets it.
      if (corrupts(a, p) && !cand.protocol) continue;
      double t = default_estimate_us(c, bytes, a, p);
      // What NCCL leaves off by default still runs where NCCL_ALGO or NCCL_PROTO names it.
      if (t < 0.0 && (cand.algorithm || cand.protocol)) t = estimate_us(c, bytes, a, p);
      if (t < 0.0 || !std::isfinite(t)) {
        if (reason.empty())
          reason = "NCCL " + std::string(nccl::nccl_name(a)) + "/" + std::string(nccl::nccl_name(p)) +
                   " has no bandwidth here";
        continue;
      }
      if (t < best_time) best_time = t, best = SimChoice{a, p, 0};  // strict <: ties to the lower index
    }
  }
  if (!best) {
    if (why) *why = reason.empty() ? "no usable algorithm/protocol" : reason;
    return std::nullopt;
  }
  best->channels = cand.channels > 0 ? std::min(cand.channels, std::max(1, cluster_.max_channels))
                                     : planned_channels(tuning_, c, best->algorithm, best->protocol, bytes,
                                                        cluster_.ranks());
  return best;
}

SimChoice NcclEstimate::default_choice(Collective c, uint64_t bytes) const {
  auto choice = resolve(c, bytes, Candidate{});
  // Ring/Simple runs every collective on any cluster of two or more ranks; one rank is a local copy.
  return choice ? *choice : SimChoice{Algorithm::ring, Protocol::simple, 1};
}

CostTable NcclEstimate::cost_table(Collective c, uint64_t bytes) const {
  CostTable t;
  t.fill(-1.0f);
  for (Algorithm a : nccl::kAllAlgorithms)
    for (Protocol p : nccl::kAllProtocols) {
      if (unsupported(c, a, p) || corrupts(a, p)) continue;
      const double us = default_estimate_us(c, bytes, a, p);
      if (us >= 0.0) t[static_cast<size_t>(ai(a) * nccl::kNumProtocols + pi(p))] = static_cast<float>(us);
    }
  return t;
}

ncclTunerConstants_v5_t default_tuner_constants() {
  ncclTunerConstants_v5_t c{};
  for (int a = 0; a < nccl::kNumAlgorithms; ++a)
    for (int p = 0; p < nccl::kNumProtocols; ++p) {
      c.baseLatencies[a][p] = kBaseLat[a][p];
      c.hwLatencies[0][a][p] = kHwLatNvlink[a][p];
      c.hwLatencies[1][a][p] = kHwLatPci[a][p];
      c.hwLatencies[2][a][p] = kHwLatNet[a][p];
    }
  for (int gen = 0; gen < 4; ++gen)
    for (int n = 0; n < 3; ++n) {
      c.llMaxBws[gen][n] = kLLMaxBw[gen][n];
      c.perChMaxRingLL128Bws[gen][n] = kRingLL128PerCh[gen];
      c.perChMaxTreeLL128Bws[gen][n] = kTreeLL128PerCh[gen][n];
      c.perChMaxTreeBws[gen][n] = kTreeSimplePerCh[gen][n];
    }
  // NVLSTree's caps: NCCL's Hopper figures (two nodes, more); the model has no NVLSTree cap of its own.
  c.perChMaxNVLSTreeBws[2][1] = 57.7;
  c.perChMaxNVLSTreeBws[2][2] = 45.5;
  return c;
}

}  // namespace autotune::sim
