#include "simulator/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace autotune::sim {

using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

namespace {

constexpr int kATree = 0, kARing = 1, kACollNetDirect = 2, kACollNetChain = 3, kANvls = 4, kANvlsTree = 5,
              kAPat = 6;
constexpr int kPLL = 0, kPLL128 = 1, kPSimple = 2;
constexpr int kHwNvlink = 0, kHwPci = 1, kHwNet = 2;
constexpr int kBroadcast = 0, kReduce = 1, kAllGather = 2, kReduceScatter = 3, kAllReduce = 4;

// One release's constants (tuning.cc): latencies in microseconds [algorithm][LL, LL128, Simple], hardware
// latencies per link kind, and the bandwidth caps per GPU generation (Volta, Ampere, Hopper, Blackwell) and
// node class (1, 2, more nodes).
struct Constants {
  float base[7][3];
  float hw[3][7][3];
  double ll_max[4][3], ring_ll128[4][3], tree_ll128[4][3], tree[4][3], nvls_tree[4][3];
  float nvls_efficiency[4];
  int generations;  // 2.22 knows no Blackwell row: sm 100 reads Hopper's
};

constexpr Constants k222 = {
    {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 0}},
     {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
    {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {0, 0, 0, 0},
    3};

constexpr Constants k229 = {
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}},
    {{{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
     {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
     {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}},
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}},
    {0.0f, 0.0f, 0.85f, 0.74f},
    4};

// Tree's correction per power of two from 64 B (ncclTopoGetAlgoTime), [LL, LL128, Simple].
constexpr float kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

// Threads and the bytes per thread below which enqueue drops a channel (device.h, comm.h).
constexpr int kMaxThreads = 640, kSimpleMaxThreads = 512, kLLMaxThreads = 512, kLL128MaxThreads = 640;
constexpr int64_t kLLThreshold = 8, kLL128Threshold = 8, kSimpleThreshold = 64, kCollNetThreshold = 512;
constexpr double kPciBw = 12.0;  // PCI_BW: a ring this slow gets 256 Simple threads

int log2i(uint64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

// What every cell reads: the communicator's shape and the caps of its generation and node class.
struct Context {
  const SimCluster& c;
  const NcclSearch& s;
  const Constants& k;
  NcclRelease r;
  int nodes, ranks, gen, idx2;
  float ppn;
  double ll_max;
};

Context context_of(const SimCluster& c, const NcclSearch& s, NcclRelease r) {
  const Constants& k = r == NcclRelease::v2_22 ? k222 : k229;
  const int gen = std::min(c.generation(), k.generations - 1), nodes = c.nodes, ranks = c.ranks();
  const int idx2 = nodes <= 2 ? nodes - 1 : 2;
  // LL's cap: one node by GPU generation, several by CPU vendor (AMD row 1, others row 0).
  const int idx1 = nodes == 1 ? gen : (c.cpu_amd ? 1 : 0);
  return Context{
      c, s, k, r, nodes, ranks, gen, idx2, static_cast<float>(ranks) / nodes, k.ll_max[idx1][idx2]};
}

const NcclGraph& graph_of(const NcclSearch& s, int a) {
  if (a == kATree) return s.tree;
  if (a == kANvls || a == kANvlsTree) return s.nvls;
  return s.ring;  // CollNet and PAT: the ring's channels stand in for their own graphs
}

bool pat_enabled(const Context& x) {
  return x.r != NcclRelease::v2_22 && x.c.sm >= 60 && x.nodes == x.ranks;
}

// Which cells ncclTopoTuneModel computes at all (the rest stay 0).
bool computed(const Context& x, int coll, int a, int p) {
  if (coll == kBroadcast || coll == kReduce) return a == kARing;
  if (coll == kAllGather || coll == kReduceScatter) {
    if (a == kAPat) return p == kPSimple && pat_enabled(x);
    if (a != kARing && a != kANvls && a != kACollNetDirect) return false;
  }
  if (a == kAPat) return false;
  if ((a == kANvls || a == kANvlsTree) && p != kPSimple) return false;
  if (x.r == NcclRelease::v2_29 && (a == kANvls || a == kANvlsTree) && graph_of(x.s, a).channels < 2)
    return false;
  return true;
}

// NVLS's bandwidth per channel before the channel count (2.29 models NVLS per channel; 2.22 takes the
// graph's).
float nvls_bw(const Context& x, int coll, int a) {
  const NcclGraph& g = graph_of(x.s, a);
  if (x.r == NcclRelease::v2_22)
    return static_cast<float>(a == kANvls ? std::min(g.bw_intra, g.bw_inter)
                                          : std::min(g.bw_intra, x.nodes <= 2 ? g.bw_inter : g.bw_inter / 2));
  float intra = static_cast<float>(g.bw_intra) * x.k.nvls_efficiency[x.gen] * (g.channels - 1) / g.channels;
  intra *= coll == kAllReduce ? 2.0f : (x.ppn - 1) / x.ppn;
  const float inter = static_cast<float>(g.bw_inter) * ((x.nodes <= 2 && a == kANvlsTree) ? 2 : 1);
  const float cap =
      a == kANvlsTree ? static_cast<float>(x.k.nvls_tree[x.gen][x.idx2]) : std::numeric_limits<float>::max();
  return std::min({intra, inter, cap});
}

float collnet_direct_bw(const Context& x, int coll, float bus_bw, float bw) {
  const NcclGraph& g = x.s.ring;
  if (coll == kAllGather || coll == kReduceScatter) {
    if (x.nodes > 1) return 0.0f;  // needs the CollNet plugin's allgather/reducescatter: not modelled
    return x.r == NcclRelease::v2_22
               ? x.ppn * bw
               : x.ppn * std::min(static_cast<float>(g.bw_intra), static_cast<float>(g.bw_inter) * 0.9f);
  }
  float factor = x.ppn / (1.0f * g.channels);  // GPUs per NIC
  factor -= (factor - 1) / 2;
  bus_bw /= factor;
  if (x.c.sm >= 90) bus_bw *= .85f;
  return bus_bw;
}

// The refinements of tuning.cc per algorithm and protocol, on the graph's channels x bandwidth.
float refined(const Context& x, int coll, int a, int p, float bus_bw, float bw) {
  const int n = graph_of(x.s, a).channels, gen = x.gen, i2 = x.idx2;
  const Constants& k = x.k;
  if (a == kARing && p == kPLL) bus_bw = std::min(static_cast<float>(x.ll_max), bus_bw * .5f);
  if (a == kARing && p == kPLL128) {
    const float share = x.r == NcclRelease::v2_22 && x.ppn < 2 ? 0.7f : 0.92f;
    bus_bw = std::min(bus_bw * share, static_cast<float>(n * k.ring_ll128[gen][i2]));
  }
  if (a == kATree && (x.r == NcclRelease::v2_22 || coll == kAllReduce))
    bus_bw = std::min(bus_bw * .92f, static_cast<float>(n * k.tree[gen][i2]));
  if (a == kATree && p == kPLL) bus_bw = std::min(bus_bw * 1.0f / 3.8f, static_cast<float>(x.ll_max));
  if (a == kATree && p == kPLL128)
    bus_bw = std::min(bus_bw * (x.nodes == 1 ? 7.0f / 9.0f : 120.0f / 128.0f),
                      static_cast<float>(n * k.tree_ll128[gen][i2]));
  if (a == kAPat) bus_bw *= .75f;
  if ((a == kACollNetDirect || a == kACollNetChain) && p != kPSimple) bus_bw = 0;
  if (a == kACollNetDirect && p == kPSimple) bus_bw = collnet_direct_bw(x, coll, bus_bw, bw);
  if (a == kANvls && x.nodes > 1 && (coll == kAllGather || coll == kReduceScatter)) bus_bw = 0;
  return bus_bw;
}

int steps_of(int coll, int ranks) {
  if (coll == kAllReduce) return 2 * (ranks - 1);
  return coll == kReduceScatter || coll == kAllGather ? ranks - 1 : ranks;
}

// Bus bandwidth to algorithm bandwidth.
float to_algorithm_bw(const Context& x, int coll, int a, float bus_bw) {
  const bool gather_like = coll == kAllGather || coll == kReduceScatter;
  if (x.r == NcclRelease::v2_22) {
    if (a == kACollNetDirect && gather_like) return bus_bw;
    if (a == kARing) return bus_bw * (1.0f * x.ranks) / steps_of(coll, x.ranks);
    return bus_bw * (a == kANvls || a == kANvlsTree ? 5.0f / 6.0f : .5f);
  }
  if (a != kARing && gather_like) return bus_bw;
  if (a == kARing || a == kANvls || a == kANvlsTree)
    return bus_bw * (1.0f * x.ranks) / steps_of(coll, x.ranks);
  return bus_bw * .5f;
}

float bandwidth_of(const Context& x, int coll, int a, int p) {
  const NcclGraph& g = graph_of(x.s, a);
  const bool collnet = a == kACollNetDirect || a == kACollNetChain;
  float bw = static_cast<float>(x.nodes <= 2 || collnet ? g.bw_intra : g.bw_inter);
  if (a == kANvls || a == kANvlsTree) bw = nvls_bw(x, coll, a);
  const float bus_bw = refined(x, coll, a, p, g.channels * bw, bw);
  return to_algorithm_bw(x, coll, a, bus_bw);
}

float ring_latency(const Context& x, int coll, int p, int hw, float intra, float inter) {
  const float* hw_lat = x.k.hw[hw][kARing];
  const int steps = steps_of(coll, x.ranks);
  if (coll == kReduce || coll == kBroadcast) {
    if (x.s.ring.same_channels) return hw_lat[p];
    return steps * (p == kPSimple ? x.k.hw[hw][kATree][p] : hw_lat[p]);
  }
  float overhead = 0.0f;  // inter-node rings launch every step's network post
  if (x.nodes > 1) overhead = (x.c.cpu_amd ? 2.0f : 1.0f) * (p == kPSimple ? 3 : 1);
  intra = std::max(intra, overhead);
  int inter_steps = 0;
  if (x.r == NcclRelease::v2_22)
    inter_steps = coll == kAllReduce ? (x.nodes > 1 ? 2 * x.nodes : 0) : x.nodes - 1;
  else if (x.nodes > 1)
    inter_steps = coll == kAllReduce ? 2 * (x.nodes - 1) : x.nodes - 1;
  return (steps - inter_steps) * intra + inter_steps * inter;
}

float latency_of(const Context& x, int coll, int a, int p) {
  const NcclGraph& g = graph_of(x.s, a);
  const int intra_hw = g.nvlink ? kHwNvlink : kHwPci, hw = x.nodes == 1 ? intra_hw : kHwNet;
  const float intra = x.k.hw[intra_hw][a][p];
  // 2.29: with one rank per node the network latency is fully exposed, read as Tree's.
  // The graph's latencyInter (the NICs' latency, once more for Simple's flush) is 0: NCCL's XML says 0.
  const float inter =
      x.r == NcclRelease::v2_29 && x.ppn == 1 ? x.k.hw[kHwNet][kATree][p] : x.k.hw[kHwNet][a][p];
  const int local = x.ranks / x.nodes, depth = log2i(static_cast<uint64_t>(x.nodes));
  const float base = x.k.base[a][p];
  switch (a) {
    case kARing:
      return base + ring_latency(x, coll, p, hw, intra, inter);
    case kATree:
      return coll == kAllReduce || x.r == NcclRelease::v2_22
                 ? base + 2 * ((local - 1) * intra + depth * inter)
                 : base;
    case kACollNetDirect:
      return base + 2 * (std::min(1, local - 1) * intra + (local - 1) * 0.4f) + inter;
    case kACollNetChain:
      return base + 2 * (local - 1) * intra + inter;
    case kANvls:
      return intra + (x.nodes > 1 ? inter : 0.0f);
    case kANvlsTree:
      return base + intra + 2 * depth * inter;
    default:  // PAT
      return coll == kAllGather || coll == kReduceScatter ? base + depth * (inter / 3.5f) + x.ranks * 2.8f
                                                          : base;
  }
}

// LL128 only where NCCL turns it on itself: NVLink inside the node, one GPU generation it tested.
bool ll128_enabled(const Context& x, int a) {
  if (!graph_of(x.s, a).nvlink) return false;
  if (x.r == NcclRelease::v2_22) return x.c.sm == 70 || x.c.sm == 80 || x.c.sm == 90;
  return x.c.sm >= 70;
}

bool algorithm_enabled(const Context& x, int a) {
  if (a == kANvlsTree && x.nodes == 1) return false;
  if ((a == kACollNetDirect || a == kACollNetChain) && !x.c.collnet) return false;
  if (a == kANvls && x.nodes > 1 && !x.c.collnet) return false;
  if (a == kACollNetDirect && !x.c.nvswitch) return false;
  if ((a == kANvls || a == kANvlsTree) && !x.c.nvls) return false;  // enqueue skips them without NVLS support
  return true;
}

void set_threads(NcclTuning& t, const NcclSearch& s, int ranks) {
  const bool slow_ring = s.ring.bw_intra * s.ring.channels <= kPciBw;
  t.max_threads[kARing][kPSimple] = slow_ring ? 256 : kSimpleMaxThreads;
  t.max_threads[kATree][kPSimple] = kSimpleMaxThreads;
  for (int a : {kACollNetDirect, kACollNetChain, kANvls, kANvlsTree})
    t.max_threads[a][kPSimple] = kMaxThreads;
  t.max_threads[kARing][kPLL] = t.max_threads[kATree][kPLL] = kLLMaxThreads;
  t.max_threads[kARing][kPLL128] = t.max_threads[kATree][kPLL128] = kLL128MaxThreads;
  for (int a = 0; a < nccl::kNumAlgorithms; ++a) {
    t.thread_threshold[a][kPLL] = kLLThreshold;
    t.thread_threshold[a][kPLL128] = kLL128Threshold;
    t.thread_threshold[a][kPSimple] = kSimpleThreshold;
  }
  t.thread_threshold[kARing][kPLL] *= ranks;
  t.thread_threshold[kACollNetDirect][kPSimple] = t.thread_threshold[kACollNetChain][kPSimple] =
      kCollNetThreshold;
}

}  // namespace

std::optional<NcclRelease> parse_nccl_release(std::string_view v) {
  if (v.starts_with("2.22.") || v == "2.22") return NcclRelease::v2_22;
  if (v.starts_with("2.29.") || v == "2.29") return NcclRelease::v2_29;
  return std::nullopt;
}

NcclTuning tune_model(const SimCluster& c, const NcclSearch& s, NcclRelease r) {
  NcclTuning t;
  t.release = r;
  t.comm_channels = c.max_channels > 0 ? std::min(s.comm_channels, c.max_channels) : s.comm_channels;
  t.nvls_channels = std::min(kNcclNvlsChannels, std::max(1, t.comm_channels));
  set_threads(t, s, c.ranks());
  if (c.ranks() < 2) return t;
  const Context x = context_of(c, s, r);
  for (int coll = 0; coll < nccl::kNumCollectives; ++coll)
    for (int a = 0; a < nccl::kNumAlgorithms; ++a)
      for (int p = 0; p < nccl::kNumProtocols; ++p) {
        if (!computed(x, coll, a, p)) continue;
        const float bw = bandwidth_of(x, coll, a, p);
        t.forced_bandwidth[coll][a][p] = bw;
        const bool off = (p == kPLL128 && !ll128_enabled(x, a)) || !algorithm_enabled(x, a);
        t.bandwidth[coll][a][p] = off ? 0.0f : bw;
        t.latency[coll][a][p] = latency_of(x, coll, a, p);
      }
  return t;
}

float algo_time_us(const NcclTuning& t, const SimCluster& c, Collective coll, Algorithm a, Protocol p,
                   uint64_t bytes, bool forced) {
  const int ci = static_cast<int>(coll), ai = static_cast<int>(a), pi = static_cast<int>(p);
  float bw = forced ? t.forced_bandwidth[ci][ai][pi] : t.bandwidth[ci][ai][pi];
  float lat = t.latency[ci][ai][pi];
  if (bw == 0) return -1.0f;
  const int log_size = bytes >= 64 ? log2i(bytes >> 6) : -1;
  const bool tree_fix = ai == kATree && (t.release == NcclRelease::v2_22 || ci == kAllReduce);
  if (tree_fix && log_size >= 0 && log_size < 23) bw *= kTreeCorrection[pi][log_size];
  if (ai == kARing && pi == kPSimple && c.nodes > 1 && ci == kAllReduce &&
      bytes / static_cast<uint64_t>(t.comm_channels * c.ranks()) >= 64)
    lat *= c.sm < 80 ? 1.9f : 1.4f;  // the ring's plateau
  return lat + static_cast<float>(bytes) / (1000 * bw);
}

int enqueue_channels(const NcclTuning& t, Algorithm a, Protocol p, uint64_t bytes) {
  const int ai = static_cast<int>(a), pi = static_cast<int>(p);
  if (ai == kANvls || ai == kANvlsTree) return t.nvls_channels;
  int nc = t.comm_channels;
  const int64_t nt = t.max_threads[ai][pi];
  int64_t threshold = t.thread_threshold[ai][pi];
  const auto b = static_cast<int64_t>(std::min<uint64_t>(bytes, std::numeric_limits<int64_t>::max()));
  if (ai == kACollNetDirect) {  // halves the threshold on the way down through 16, 8, 4, 2, 1 (one head)
    for (int sw = 16; sw >= 1; sw /= 2) {
      bool below = false;
      while ((below = b < nc * nt * threshold) && nc > sw) {
        if (nc == sw + sw / 2) threshold /= 2;
        --nc;
      }
      if (!below) break;
    }
    return nc;
  }
  while (b < nc * nt * threshold && nc >= 2) --nc;
  return nc;
}

namespace {

uint64_t div_up(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

// The planner's cells: traffic per byte (AllReduce twice, AllGather and ReduceScatter once per rank, LL
// four times its payload: enqueue.cc multiplies the task's traffic too) and 32 KiB of traffic per cell at
// least, in 16-byte steps.
struct Cells {
  uint64_t count, cells, cell_bytes, per_cell_traffic, per_channel_traffic;
};

Cells cells_of(Collective coll, Protocol p, uint64_t bytes, int ranks, uint64_t channels) {
  constexpr uint64_t kMinTraffic = 32 << 10;
  const bool gather = coll == Collective::allgather || coll == Collective::reducescatter;
  const uint64_t per_byte = coll == Collective::allreduce ? 2 : (gather ? ranks : 1);
  const uint64_t count = gather ? bytes / static_cast<uint64_t>(ranks) : bytes;  // per rank for those two
  const uint64_t cell_traffic = per_byte * (p == Protocol::ll ? 4 : 1);  // LL's task traffic counts 4x too
  const uint64_t traffic = std::max(kMinTraffic, count * cell_traffic);
  const uint64_t cell = div_up(div_up(kMinTraffic, cell_traffic), 16) * 16;
  return Cells{count, div_up(count, cell), cell, cell * cell_traffic, div_up(traffic / channels, 16) * 16};
}

}  // namespace

int planned_channels(const NcclTuning& t, Collective coll, Algorithm a, Protocol p, uint64_t bytes,
                     int ranks) {
  const int ai = static_cast<int>(a);
  const int nc = enqueue_channels(t, a, p, bytes);
  if (ai == kACollNetDirect || ai == kACollNetChain || bytes == 0 || ranks < 1) return nc;
  const bool nvls = ai == kANvls || ai == kANvlsTree;
  const int64_t kind_max = nvls ? t.nvls_channels : t.comm_channels;
  const Cells x = cells_of(coll, p, bytes, ranks, static_cast<uint64_t>(std::min<int64_t>(nc, kind_max)));
  if (x.cells == 0) return nc;  // less than a byte per rank: nothing for the planner to spread
  uint64_t per_channel = std::min(x.cells, div_up(x.per_channel_traffic, x.per_cell_traffic));
  const uint64_t lo = kind_max == 1 ? x.cells : per_channel;
  int64_t mid = static_cast<int64_t>((x.cells - lo) / per_channel);
  uint64_t hi = (x.cells - lo) % per_channel;
  if (kind_max < (lo != 0) + mid + (hi != 0)) {  // more than the channels there are: squeeze into them
    mid = kind_max - 2;
    per_channel = (x.cells - lo) / static_cast<uint64_t>(mid + 1);
    hi = per_channel + (x.cells - lo) % static_cast<uint64_t>(mid + 1);
  }
  if (hi == 0 && mid != 0) hi = per_channel, mid -= 1;
  // The last cell is short by what the message does not fill; an emptied low channel drops out.
  uint64_t count_lo = lo * x.cell_bytes, count_hi = hi * x.cell_bytes;
  (count_hi != 0 ? count_hi : count_lo) -= x.cells * x.cell_bytes - x.count;
  return static_cast<int>((count_lo != 0 ? 1 : 0) + mid + (hi != 0 ? 1 : 0));
}

}  // namespace autotune::sim
