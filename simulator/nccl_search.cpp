#include "simulator/nccl_search.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <span>

namespace autotune::sim {

namespace {

// The speeds NCCL's search tries, GB/s per channel, fastest first (search.cc): inside one node and across
// nodes, for Volta/Ampere, Hopper and Blackwell.
constexpr double kSpeedsIntra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr double kSpeedsInter[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                   7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
constexpr double kSm90Intra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kSm90Inter[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
constexpr double kSm100Intra[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
constexpr double kSm100Inter[] = {96,   80, 48, 45.1, 42, 40,  30,  24,   22,  20,
                                  17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};
constexpr int kMaxChannels = 32;       // MAXCHANNELS; the ring search asks for at most half
constexpr double kLocalBw = 5000.0;    // LOC_BW: what a lone GPU "searches" at
constexpr double kNoSolutionBw = 0.1;  // NCCL's fallback ring when the search finds nothing

std::span<const double> speeds(int sm, bool inter) {
  if (sm >= 100) return inter ? std::span<const double>(kSm100Inter) : std::span<const double>(kSm100Intra);
  if (sm >= 90) return inter ? std::span<const double>(kSm90Inter) : std::span<const double>(kSm90Intra);
  return inter ? std::span<const double>(kSpeedsInter) : std::span<const double>(kSpeedsIntra);
}

// A NIC's bandwidth as NCCL's topology has it: the ports' line rate (Mb/s / 8000), not their payload.
double nic_line_gbps(const SimNic& n) {
  return n.gbytes_per_s() / kNicPayloadShare;
}

// What the search works with: the most one channel's path can carry (maxBw), the most one GPU's links carry
// (totalBw), and how many channels of a given speed the links take.
struct SearchLinks {
  double max_bw = 0.0, total_bw = 0.0;
  std::function<int(double)> fit;
};

SearchLinks search_links(const SimCluster& c) {
  const bool inter = c.nodes > 1;
  const double inf = std::numeric_limits<double>::infinity();
  // Each channel crosses every GPU's link (and, GPUs on two sockets, the link between them) once per
  // direction: the narrowest decides how many fit.
  double intra = inf;
  if (c.gpus_per_node > 1)
    intra = c.nvlink ? c.intra_gbps
                     : (c.nccl_cpu_gbps > 0.0 ? std::min(c.nccl_pci_gbps, c.nccl_cpu_gbps) : c.nccl_pci_gbps);
  SearchLinks l;
  l.total_bw = std::max(c.nccl_pci_gbps, c.nvlink ? c.intra_gbps : 0.0);
  l.max_bw = c.nvlink ? c.intra_gbps : c.nccl_pci_gbps;
  if (inter) {
    double best_nic = 0.0;
    for (const auto& n : c.nics) best_nic = std::max(best_nic, nic_line_gbps(n));
    l.max_bw = std::min(c.nccl_pci_gbps, best_nic);  // a GPU reaches its NIC over PCIe
  }
  std::vector<double> nics;
  for (const auto& n : c.nics) nics.push_back(nic_line_gbps(n));
  const double pci = c.nccl_pci_gbps, gpus = c.gpus_per_node;
  l.fit = [intra, inter, nics, pci, gpus](double speed) {
    double n = std::floor(intra / speed + 1e-9);
    if (inter) {  // each channel leaves the node through one NIC, from one GPU over its PCIe link
      double through_nics = 0.0;
      for (double nic : nics) through_nics += std::floor(nic / speed + 1e-9);
      n = std::min({n, through_nics, gpus * std::floor(pci / speed + 1e-9)});
    }
    return static_cast<int>(std::min<double>(n, kMaxChannels));
  };
  return l;
}

struct Found {
  int channels = 0;
  double bw = 0.0;
};

// Pass 1: from the fastest speed a channel's path allows, down while the next speed is above half the best
// found; keep the most channels x bandwidth, stop at max_channels or at the GPU's whole bandwidth.
Found first_pass(std::span<const double> s, const SearchLinks& l, double total_bw, int min_ch, int max_ch) {
  size_t i = 0;
  while ((s[i] > l.max_bw || s[i] * min_ch > total_bw) && i + 1 < s.size()) ++i;
  Found best;
  for (;;) {
    const int n = std::min(l.fit(s[i]), max_ch);
    if (n >= min_ch && n * s[i] > best.channels * best.bw) best = {n, s[i]};
    if (best.channels == max_ch || best.channels * best.bw >= total_bw) break;
    if (i + 1 < s.size() && (best.channels == 0 || s[i + 1] / best.bw > .49))
      ++i;
    else
      break;
  }
  return best;
}

// ncclTopoDupChannels: fast channels are split in two (not on Hopper+ below 50 GB/s with more than 4).
void dup_channels(Found& f, int sm, int max_ch) {
  if (f.channels == 0 || f.bw < 25.0 || (sm > 80 && f.bw < 50.0 && f.channels > 4)) return;
  const int dup = std::min(2 * f.channels, max_ch);
  f.bw /= (dup + f.channels - 1) / f.channels;
  f.channels = dup;
}

// Pass 2: the same channels at the next faster speeds while they fit (a tree up to twice its first speed).
void second_pass(Found& f, std::span<const double> s, const SearchLinks& l, bool tree) {
  size_t i = 0;
  while (s[i] > f.bw && i + 1 < s.size()) ++i;
  const double first = f.bw;
  while (i > 0 && l.fit(s[i - 1]) >= f.channels && (!tree || s[i - 1] < 2 * first)) f.bw = s[--i];
}

NcclGraph search(const SimCluster& c, const SearchLinks& l, bool tree, int channels) {
  const auto s = speeds(c.sm, c.nodes > 1);
  const int g = c.gpus_per_node;
  double total = l.total_bw;
  if (tree && g > 1) total *= g / (g - 1.0);
  const int min_ch = tree ? channels : 1, max_ch = tree ? channels : kMaxChannels / 2;
  Found f = first_pass(s, l, total, min_ch, max_ch);
  NcclGraph graph;
  graph.nvlink = c.nvlink;
  if (f.channels == 0) {  // NCCL's fallback: one channel in plain order over the slowest path
    graph.channels = 1;
    graph.bw_intra = graph.bw_inter = kNoSolutionBw;
    graph.nvlink = false;
    return graph;
  }
  dup_channels(f, c.sm, max_ch);
  second_pass(f, s, l, tree);
  graph.channels = f.channels;
  graph.bw_intra = graph.bw_inter = f.bw;
  return graph;
}

// NVLS: NCCL asks for one channel per GPU of the node (NCCL_MAX_NVLS_ARITY at most).
NcclGraph nvls_graph(const SimCluster& c, const NcclGraph& ring) {
  NcclGraph g;
  if (!c.nvls || !c.nvlink) return g;
  g.channels = std::min(c.gpus_per_node, kMaxChannels);
  for (double s : speeds(c.sm, false))
    if (s * g.channels <= c.intra_gbps) {
      g.bw_intra = s;
      break;
    }
  // On one node the search's second pass raises bwInter while below twice bwIntra (search.cc).
  g.bw_inter = c.nodes > 1 ? ring.bw_inter : 0.0;
  if (c.nodes == 1)
    for (double s : speeds(c.sm, false))
      if (s < 2 * g.bw_intra) {
        g.bw_inter = s;
        break;
      }
  g.nvlink = true;
  g.same_channels = false;
  return g;
}

}  // namespace

NcclSearch search_graphs(const SimCluster& c) {
  NcclSearch out;
  if (c.ranks() < 2) {
    out.ring = out.tree = NcclGraph{1, kLocalBw, kLocalBw, c.nvlink, true};
    return out;
  }
  const SearchLinks l = search_links(c);
  out.ring = search(c, l, false, 0);
  out.tree = search(c, l, true, out.ring.channels);
  out.nvls = nvls_graph(c, out.ring);
  // connect.cc: every searched channel runs twice; Hopper+ across nodes doubles fast rings again.
  int n = std::min(kMaxChannels, 2 * std::min(out.ring.channels, out.tree.channels));
  if (c.sm >= 90 && c.nodes > 1 && out.ring.bw_intra > 45.0 && n < 16) n *= 2;
  out.comm_channels = n;
  return out;
}

}  // namespace autotune::sim
