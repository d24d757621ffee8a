#include "simulator/hardware_model.hpp"

#include "simulator/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace autotune::sim {

using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

namespace {

// Ring busbw as a share of one GPU's NVLink line rate, by generation [Volta, Ampere, Hopper, Blackwell]:
// 8x H100 370 of 450 GB/s (nccl-tests issue 212), 8x A100 232.5 of 300 (nccl-tests issue 175, Azure's ND
// A100 v4), 8x B300 695 of 900 (NCCL issue 2140). Volta's is assumed like Blackwell's.
constexpr double kRingShare[4] = {0.77, 0.775, 0.82, 0.77};
// PCIe-only nodes: about 85% of the link's raw rate reaches the payload.
constexpr double kPcieRingShare = 0.85;
// NVLS all-reduce busbw over ring's by GPUs on the switch: 370 up to 4 H100, 420/440/460/480 at 5/6/7/8
// (NCCL issue 1455).
constexpr double kNvlsGain[9] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.14, 1.19, 1.25, 1.30};
// Across nodes a GPU's SMs and NVLinks also feed the network: 86% of the one-node rate. Fitted on NCCL
// issue 1221 (8x H100, 8x 400G: 330 GB/s without NVLS and 430 with it on 2 nodes, 320 on 4).
constexpr double kCrossNodeShare = 0.86;
// A tree on more than two nodes: interior nodes send each byte to two children and one parent (the most
// the NICs could carry). What trees and NVLS reach there is no more than a ring's: 320 GB/s with or without
// NVLS on 4 nodes of 8x H100 (NCCL issue 1221), no gain on 4 nodes (NCCL issue 1031).
constexpr double kTreeTrafficBeyondTwoNodes = 1.5;
// SHARP (CollNet) reduces in the switch; its own overheads are NCCL's estimate's (0.9 direct, 0.8 chain).
constexpr double kCollNetDirectShare = 0.9, kCollNetChainShare = 0.8, kPatShare = 0.9;
// Protocol payload: LL writes a 4-byte flag with every 4 bytes of data; LL128 8 bytes per 128-byte line.
constexpr double kLLShare = 0.5, kLL128Share = 120.0 / 128.0;
// Of the communicator's maximum channels, the share that saturates the links (a channel drives a bit more
// than its even share).
constexpr double kSaturatingChannels = 0.75;
// Pipeline fill: the first and last chunks cross without overlap, and NCCL's chunks grow with the message:
// up to 53 MB more moved per rank (110 us at the 482 GB/s of 8x H200 NVLS), half of it at 100 MB moved per
// rank (bytes x busbw factor). Fitted on 8x H200 (Azure/AI-benchmarking-guide: 368 GB/s at 64 MiB to 480 at
// 8 GiB) and 8x A100 (228 at 1 GiB, 231.6 at 8 GiB).
constexpr double kFillBytes = 53e6, kFillHalfBytes = 100e6;

double bus_factor(Collective c, int ranks) {
  return nccl::bus_bandwidth_factor(c, ranks);
}

// One node's busbw for the algorithm's intra-node part, over `g` GPUs (Simple, all channels).
double one_node_busbw(const SimCluster& c, const Links& l, Collective coll, Algorithm a, int g) {
  const double share = c.nvlink ? kRingShare[c.generation()] : kPcieRingShare;
  const double ring = share * l.intra_line_gbps * l.intra_scale;
  if (a == Algorithm::nvls || a == Algorithm::nvls_tree)
    return coll == Collective::allreduce ? ring * kNvlsGain[std::clamp(g, 0, 8)] : ring;
  return ring;
}

// Busbw the NICs allow, in the busbw of all `n` ranks: a node sends `traffic` x the message per direction.
double nic_bound(const Links& l, Collective coll, int n, double traffic) {
  return l.net_gbps * bus_factor(coll, n) / traffic;
}

double multi_node_busbw(const SimCluster& c, const Links& l, Collective coll, Algorithm a) {
  const int g = c.gpus_per_node, n = c.ranks();
  // The intra-node part as algbw (bytes of the message per second), then in the whole job's busbw.
  const double intra_alg = g > 1 ? one_node_busbw(c, l, coll, a, g) / bus_factor(coll, g)
                                 : std::numeric_limits<double>::infinity();
  const double intra = intra_alg * kCrossNodeShare * bus_factor(coll, n);
  const double ring_intra = g > 1 ? one_node_busbw(c, l, coll, Algorithm::ring, g) * kCrossNodeShare
                                  : std::numeric_limits<double>::infinity();
  const double ring = std::min(ring_intra, l.net_gbps);
  switch (a) {
    case Algorithm::ring:
      return ring;
    case Algorithm::tree:
    case Algorithm::nvls:
    case Algorithm::nvls_tree:
      if (coll != Collective::allreduce || c.nodes > 2) return ring;
      return std::min(intra, nic_bound(l, coll, n, 1.0));
    case Algorithm::collnet_direct:
      return kCollNetDirectShare * std::min(intra, nic_bound(l, coll, n, 1.0));
    case Algorithm::collnet_chain:
      return kCollNetChainShare * std::min(intra, nic_bound(l, coll, n, 1.0));
    case Algorithm::pat:
      return kPatShare * std::min(ring_intra, l.net_gbps);
  }
  return std::min(ring_intra, l.net_gbps);
}

}  // namespace

double true_peak_busbw(const SimCluster& c, const Links& links, Collective coll, Algorithm a, Protocol p,
                       int channels) {
  double bw =
      c.nodes > 1 ? multi_node_busbw(c, links, coll, a) : one_node_busbw(c, links, coll, a, c.gpus_per_node);
  int max_ch = std::max(1, c.max_channels);
  // NVLS runs on its own channels, at most NCCL's NVLS count, and saturates the switches with those.
  if (a == Algorithm::nvls || a == Algorithm::nvls_tree) max_ch = std::min(max_ch, kNcclNvlsChannels);
  const int ch = channels <= 0 ? max_ch : std::min(channels, max_ch);
  bw *= std::min(1.0, ch / (kSaturatingChannels * max_ch));
  if (p == Protocol::ll) bw *= kLLShare;
  if (p == Protocol::ll128) bw *= kLL128Share;
  return std::min(bw, max_busbw_gbps(c, links, coll, a));
}

double max_busbw_gbps(const SimCluster& c, const Links& l, Collective coll, Algorithm a) {
  const double factor = bus_factor(coll, c.ranks());
  // What each GPU sends per direction, and each node into the network, in units of the message: a ring
  // moves the busbw factor's worth, so its busbw is at most the line rate; NVLS and CollNet reduce in the
  // switch (each GPU sends the message once), a tree sends it up and down its chain (twice) and across
  // nodes once on two nodes, half again beyond.
  double gpu_traffic = factor, net_traffic = factor;
  if (coll == Collective::allreduce) switch (a) {
      case Algorithm::nvls:
      case Algorithm::collnet_direct:
      case Algorithm::collnet_chain:
        gpu_traffic = net_traffic = 1.0;
        break;
      case Algorithm::tree:
      case Algorithm::nvls_tree:
        gpu_traffic = a == Algorithm::tree ? 2.0 : 1.0;
        net_traffic = c.nodes == 2 ? 1.0 : kTreeTrafficBeyondTwoNodes;
        break;
      case Algorithm::ring:
      case Algorithm::pat:
        break;
    }
  const double intra = c.gpus_per_node > 1 ? l.intra_line_gbps * l.intra_scale * factor / gpu_traffic
                                           : std::numeric_limits<double>::infinity();
  if (c.nodes < 2) return intra;
  return std::min(intra, l.net_gbps / kNicPayloadShare * factor / net_traffic);
}

double pipeline_fill_bytes(Collective coll, int ranks, uint64_t bytes) {
  const double moved = static_cast<double>(bytes) * bus_factor(coll, ranks);
  return kFillBytes * moved / (moved + kFillHalfBytes);
}

}  // namespace autotune::sim
