#include "simulator/p2p_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/input_error.hpp"
#include "nccl/env_policy.hpp"

namespace autotune::sim {

namespace {

constexpr int kSteps = 8;                 // NCCL_STEPS: chunks in flight per channel and peer
constexpr int kPeersPerRound = 8;         // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
constexpr double kChannelNetGbps = 25.0;  // what one channel to one network peer carries
constexpr double kNetRoundTripUs = 10.0;
constexpr double kNvlRoundTripUs = 3.0;
constexpr double kNetStepUs = 1.0;  // per chunk: the proxy posts it, the NIC completes it
constexpr double kNvlStepUs = 0.4;
constexpr double kNvlP2pShare = 0.8;      // of the NVLink line rate a copy engine-free p2p copy reaches
constexpr double kHostBounceGbps = 20.0;  // intra-node through host memory (no P2P transport)
constexpr double kOffRailLoss = 0.25;     // as block_nets' off-rail paths (sim_model.cpp)

int64_t env_integer(const std::map<std::string, std::string>& env, const std::string& key, int64_t fallback) {
  auto it = env.find(key);
  if (it == env.end()) return fallback;
  try {
    nccl::check_env_entry(key, it->second);
  } catch (const InputError& e) {
    throw InputError("<env " + key + ">", 0, e.message());
  }
  return std::stoll(it->second);
}

// Whether a path level value (name or old number, as nccl/env_policy checks it) lets a GPU at PIX from its
// NIC, or two GPUs of one node, use the direct path: old numbers 0 LOC, 1 PIX, ...; names in NCCL's order.
int path_rank(const std::string& value) {
  static const std::vector<std::string> names = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                                 "PXB", "P2C", "PXN", "PHB", "SYS"};
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == value) return static_cast<int>(i);
  static const int old_to_new[] = {0, 4, 5, 8, 9, 9};
  return old_to_new[std::min(5, std::stoi(value))];
}

std::optional<int> env_level(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end()) return std::nullopt;
  try {
    nccl::check_env_entry(key, it->second);
  } catch (const InputError& e) {
    throw InputError("<env " + key + ">", 0, e.message());
  }
  return path_rank(it->second);
}

int pow2_up(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

P2pTraffic busiest_rank(const SimCluster& c, nccl::Operation op, uint64_t bytes) {
  const int g = std::max(1, c.gpus_per_node), n = c.ranks();
  P2pTraffic t;
  if (op == nccl::Operation::sendrecv) {
    // Rank r sends to r+1: across nodes, the last rank of a node sends to the next node's first (another
    // rail when a node holds several ranks); that rank paces the ring.
    t.per_peer = static_cast<double>(bytes);
    (c.nodes > 1 ? t.net_peers : t.intra_peers) = 1;
    t.off_rail_share = g > 1 ? 1.0 : 0.0;
    return t;
  }
  // alltoall: every rank to every other; gather's and scatter's root: the same peers, one way.
  t.per_peer = static_cast<double>(bytes) / n;
  t.intra_peers = g - 1;
  t.net_peers = (c.nodes - 1) * g;
  t.off_rail_share = (g - 1.0) / g;
  return t;
}

// Channels to each network peer: the setting, else NCCL's (enough for the GPU's NIC, fewer while all peers
// would not fit the p2p channels in one round).
int net_channels_per_peer(const SimCluster& c, const Links& links, const P2pSettings& s) {
  if (s.channels_per_net_peer > 0) return s.channels_per_net_peer;
  const double gpu_net = links.net_gbps / std::max(1, c.gpus_per_node);
  int per_peer = pow2_up(std::max(1, static_cast<int>(std::ceil(gpu_net / kChannelNetGbps))));
  const int rounds = (c.ranks() + kPeersPerRound - 1) / kPeersPerRound;
  while (per_peer * rounds > std::max(1, c.max_channels) && per_peer > 1) per_peer /= 2;
  return per_peer;
}

// Time of `peers` transfers of `per_peer` bytes over a link of `gbps`, `concurrent` chunks' worth of
// channels at once, each step costing `step_us`: bytes over bandwidth, the steps' overhead, the first chunk's
// fill.
double transfer_us(int peers, double per_peer, double gbps, double chunk, double step_us, int concurrent) {
  if (peers <= 0 || per_peer <= 0.0) return 0.0;
  const double steps = std::ceil(per_peer / chunk) * peers;
  return peers * per_peer / (1000.0 * gbps) + steps * step_us / std::max(1, concurrent) +
         std::min(per_peer, chunk) / (1000.0 * gbps);
}

}  // namespace

std::vector<std::string> p2p_env_names() {
  return {"NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE",      "NCCL_P2P_PCI_CHUNKSIZE",
          "NCCL_BUFFSIZE",          "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_PXN_DISABLE",
          "NCCL_P2P_PXN_LEVEL",     "NCCL_IB_QPS_PER_CONNECTION",  "NCCL_NET_GDR_LEVEL",
          "NCCL_P2P_LEVEL"};
}

P2pSettings read_p2p_settings(const std::map<std::string, std::string>& env) {
  P2pSettings s;
  s.net_chunk = env_integer(env, "NCCL_P2P_NET_CHUNKSIZE", s.net_chunk);
  s.nvl_chunk = env_integer(env, "NCCL_P2P_NVL_CHUNKSIZE", s.nvl_chunk);
  s.pci_chunk = env_integer(env, "NCCL_P2P_PCI_CHUNKSIZE", s.pci_chunk);
  s.buffsize = env_integer(env, "NCCL_BUFFSIZE", s.buffsize);
  s.channels_per_net_peer = static_cast<int>(env_integer(env, "NCCL_NCHANNELS_PER_NET_PEER", 0));
  s.pxn = env_integer(env, "NCCL_PXN_DISABLE", 0) == 0 && env_integer(env, "NCCL_P2P_PXN_LEVEL", 2) > 0;
  s.qps_per_connection = static_cast<int>(env_integer(env, "NCCL_IB_QPS_PER_CONNECTION", 1));
  constexpr int kPix = 4;  // the model's GPUs sit behind a PCIe switch with their NIC
  if (auto level = env_level(env, "NCCL_NET_GDR_LEVEL")) s.gdr = *level >= kPix;
  if (auto level = env_level(env, "NCCL_P2P_LEVEL")) s.p2p_intra = *level > 0;
  return s;
}

int64_t p2p_chunk_bytes(const SimCluster& c, const P2pSettings& s) {
  const int64_t chunk = c.nodes > 1 ? s.net_chunk : c.nvlink ? s.nvl_chunk : s.pci_chunk;
  return std::min(chunk, s.buffsize / kSteps);
}

double p2p_time_us(const SimCluster& c, const Links& links, const P2pSettings& s, nccl::Operation op,
                   uint64_t bytes) {
  if (c.ranks() < 2)
    return p2p_traffic_time_us(c, links, s, P2pTraffic{.local_bytes = static_cast<double>(bytes)});
  return p2p_traffic_time_us(c, links, s, busiest_rank(c, op, bytes));
}

double p2p_traffic_time_us(const SimCluster& c, const Links& links, const P2pSettings& s,
                           const P2pTraffic& t) {
  if (t.intra_peers + t.net_peers == 0)
    return 2.0 + t.local_bytes / (1000.0 * 1000.0);  // a device-local copy
  const double chunk = static_cast<double>(std::max<int64_t>(1, p2p_chunk_bytes(c, s)));
  const int g = std::max(1, c.gpus_per_node);

  double intra_gbps = links.intra_line_gbps * links.intra_scale * (c.nvlink ? kNvlP2pShare : 1.0);
  if (!s.p2p_intra) intra_gbps = std::min(intra_gbps, kHostBounceGbps);
  intra_gbps = std::min(intra_gbps, 2.0 * kSteps * chunk / (kNvlRoundTripUs * 1000.0));

  double net_us = 0.0, intra_bytes_extra = 0.0;
  if (t.net_peers > 0) {
    double gpu_net = links.net_gbps / g;  // GPUDirect's loss is in links already (sim_model)
    if (s.pxn)
      intra_bytes_extra = t.net_peers * t.per_peer * t.off_rail_share;  // the hop to the rail's GPU
    else
      gpu_net *= 1.0 - kOffRailLoss * t.off_rail_share / std::min(4, std::max(1, s.qps_per_connection));
    const int per_peer = net_channels_per_peer(c, links, s);
    const int concurrent = per_peer * std::min(t.net_peers, kPeersPerRound);
    const double channel_gbps = std::min(kChannelNetGbps, kSteps * chunk / (kNetRoundTripUs * 1000.0));
    const double net_gbps = std::min(gpu_net, concurrent * channel_gbps);
    net_us = transfer_us(t.net_peers, t.per_peer, net_gbps, chunk, kNetStepUs, concurrent);
  }
  double intra_us = transfer_us(t.intra_peers, t.per_peer, intra_gbps, chunk, kNvlStepUs,
                                2 * std::min(std::max(1, t.intra_peers), kPeersPerRound));
  if (intra_bytes_extra > 0.0) intra_us += intra_bytes_extra / (1000.0 * intra_gbps);

  const int peers = t.intra_peers + t.net_peers;
  const int rounds = (peers + kPeersPerRound - 1) / kPeersPerRound;
  const double latency = (t.net_peers > 0 ? 12.0 + (s.pxn ? 2.0 : 0.0) : 6.0) + 1.5 * rounds;
  return latency + std::max(intra_us, net_us);
}

}  // namespace autotune::sim
