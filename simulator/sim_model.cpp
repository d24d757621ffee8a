#include "simulator/sim_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "common/input_error.hpp"
#include "nccl/ib_hca_spec.hpp"
#include "simulator/sim_constants.hpp"
#include "simulator/sim_random.hpp"

namespace autotune::sim {

using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;
using runners::Candidate;

namespace {

using nccl::is_allowed;

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
constexpr double kNvlsEfficiency = 0.85;
// Bytes per channel below which NCCL's default drops a channel (its enqueue heuristic, simplified).
constexpr uint64_t kBytesPerChannel = 32 * 1024;

int ai(Algorithm a) {
  return static_cast<int>(a);
}
int pi(Protocol p) {
  return static_cast<int>(p);
}

double log2_ceil(int n) {
  return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n)));
}

int node_index(int nodes) {
  return nodes <= 1 ? 0 : (nodes == 2 ? 1 : 2);
}

std::string env_context(const std::string& name) {
  return "<env " + name + ">";
}

int parse_env_int(const std::string& name, const std::string& value, int lo, int hi) {
  try {
    size_t used = 0;
    int v = std::stoi(value, &used);
    if (used == value.size() && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw InputError(
      env_context(name), 0,
      "an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", found '" + value + "'");
}

// What NCCL keeps of the node's NICs under an NCCL_IB_HCA value: the ports the value selects, read exactly as
// NCCL reads it (nccl/ib_hca_spec.hpp: prefixes unless '=', '^' excludes, ':port' narrows to one port).
std::vector<SimNic> select_nics(const std::vector<SimNic>& all, const std::string& value) {
  nccl::IbHcaSpec spec;
  try {
    spec = nccl::parse_ib_hca_spec(value);
  } catch (const InputError& e) {
    throw InputError(env_context("NCCL_IB_HCA"), 0, e.message());
  }
  std::vector<SimNic> out;
  for (const auto& nic : all) {
    SimNic kept = nic;
    kept.ports.clear();
    for (const auto& p : nic.ports)
      if (spec.selects(nic.name, p.port)) kept.ports.push_back(p);
    if (!kept.ports.empty()) out.push_back(std::move(kept));
  }
  return out;
}

// What one communicator's block of GPUs gets of the node's network: GB/s, and the kept NICs it uses.
struct BlockNet {
  double gbps = 0.0;
  std::set<std::string> nics;
};

// Inter-node bandwidth per node of each of the communicators that run at once (groups_per_node of them, each
// on its own block of consecutive GPUs, wrapping around the node; block b starts at base + b * per_group).
// Rails as rail_nics() wires them (sim_cluster.hpp). A GPU none of whose rail NICs NCCL_IB_HCA kept reaches
// one of the kept NICs across PCIe switches or the CPU interconnect, which costs about a quarter of its
// bandwidth. A NIC that several groups use is shared evenly: eight one-rank-per-node groups over eight rail
// NICs each get one NIC, over two NICs four share each.
std::vector<BlockNet> block_nets(const std::vector<SimNic>& all_nics, const SimCluster& c, int base) {
  const int node_gpus = std::max(1, c.node_gpus), k = static_cast<int>(all_nics.size());
  const int per_group = std::max(1, c.gpus_per_node), groups = std::max(1, c.groups_per_node);
  auto kept_index = [&](int j) -> std::optional<size_t> {
    for (size_t i = 0; i < c.nics.size(); ++i)
      if (c.nics[i].name == all_nics[static_cast<size_t>(j)].name) return i;
    return std::nullopt;
  };
  // The kept NICs GPU g uses, and whether they are its own.
  auto nics_of = [&](int g, bool* on_rail) {
    std::set<size_t> out;
    for (int j : rail_nics(k, node_gpus, g))
      if (auto i = kept_index(j)) out.insert(*i);
    *on_rail = !out.empty();
    if (out.empty()) out.insert(static_cast<size_t>(g) % c.nics.size());
    return out;
  };
  std::vector<std::set<size_t>> used(groups);
  std::vector<int> off_rail(groups, 0), users(c.nics.size(), 0);
  for (int b = 0; b < groups; ++b) {
    for (int i = 0; i < per_group; ++i) {
      const int g = (base + b * per_group + i) % node_gpus;
      bool on_rail = false;
      for (size_t n : nics_of(g, &on_rail)) used[b].insert(n);
      off_rail[b] += on_rail ? 0 : 1;
    }
    for (size_t n : used[b]) ++users[n];
  }
  std::vector<BlockNet> out(groups);
  for (int b = 0; b < groups; ++b) {
    for (size_t n : used[b]) {
      out[b].gbps += c.nics[n].gbytes_per_s() / users[n];
      out[b].nics.insert(c.nics[n].name);
    }
    out[b].gbps *= 1.0 - 0.25 * static_cast<double>(off_rail[b]) / per_group;
  }
  return out;
}

// This communicator's share of the network: its own block's, or the slowest block's when it stands for
// every block (first_gpu -1, then every kept NIC counts as used).
BlockNet group_net(const std::vector<SimNic>& all_nics, const SimCluster& c) {
  const int per_group = std::max(1, c.gpus_per_node);
  const int base = c.first_gpu < 0 ? 0 : c.first_gpu % per_group;
  const std::vector<BlockNet> blocks = block_nets(all_nics, c, base);
  if (c.first_gpu >= 0) {
    const size_t own = static_cast<size_t>((c.first_gpu - base) / per_group) % blocks.size();
    return blocks[own];
  }
  BlockNet slowest = blocks.front();
  for (const auto& b : blocks) slowest.gbps = std::min(slowest.gbps, b.gbps);
  slowest.nics.clear();
  for (const auto& n : c.nics) slowest.nics.insert(n.name);
  return slowest;
}

}  // namespace

SimModel::SimModel(SimCluster cluster, const std::map<std::string, std::string>& env,
                   SimDeviations deviations)
    : cluster_(std::move(cluster)), deviations_(deviations) {
  const std::vector<SimNic> all_nics = cluster_.nics;
  double cross_nic_factor = 1.0;
  for (const auto& [name, value] : env) {
    if (name == "NCCL_IB_HCA") {
      cluster_.nics = select_nics(all_nics, value);
    } else if (name == "NCCL_CROSS_NIC") {
      int v = parse_env_int(name, value, 0, 2);
      // NCCL_CROSS_NIC=2 (the default) lets NCCL pick; forcing 0 or 1 helps or hurts a little depending on
      // how the fabric is wired, which the model cannot know: a small seeded effect of up to +-3%.
      if (v != 2)
        cross_nic_factor =
            1.0 +
            0.06 * (random::uniform(random::hash({deviations_.seed, 77, static_cast<uint64_t>(v)})) - 0.5);
    } else if (name == "NCCL_MAX_NCHANNELS") {
      cluster_.max_channels = std::min(cluster_.max_channels, parse_env_int(name, value, 1, 64));
    } else if (name == "NCCL_MIN_NCHANNELS") {
      parse_env_int(name, value, 1, 64);  // only raises NCCL's lower bound; our default already uses the max
    } else if (name == "NCCL_NVLS_ENABLE") {
      if (parse_env_int(name, value, 0, 2) == 0) cluster_.nvls = false;
    } else if (name == "NCCL_COLLNET_ENABLE") {
      collnet_enabled_ = parse_env_int(name, value, 0, 1) == 1;
    }
    // Anything else does not change performance in this model (NCCL ignores names it does not know).
  }
  cluster_.collnet = cluster_.collnet && collnet_enabled_;
  std::set<std::string> used_nics;
  if (cluster_.nodes > 1 && !cluster_.nics.empty()) {
    BlockNet own = group_net(all_nics, cluster_);
    net_gbps_ = own.gbps * cross_nic_factor;
    used_nics = std::move(own.nics);
  } else if (cluster_.nodes > 1) {
    net_gbps_ = 3.0;  // no IB device left: NCCL falls back to its socket transport
  }
  apply_faults(used_nics);
}

std::optional<std::string> SimModel::unsupported(Collective c, Algorithm a, Protocol p) const {
  if (!is_allowed(c, a, p))
    return std::string("NCCL does not run ") + std::string(nccl::nccl_name(c)) + " with " +
           std::string(nccl::nccl_name(a)) + "/" + std::string(nccl::nccl_name(p));
  if (cluster_.ranks() < 2) return std::string("one rank: NCCL does not consult the tuner");
  switch (a) {
    case Algorithm::nvls:
      if (!cluster_.nvls) return std::string("NVLS needs Hopper or newer GPUs behind NVSwitches");
      break;
    case Algorithm::nvls_tree:
      if (!cluster_.nvls) return std::string("NVLSTree needs Hopper or newer GPUs behind NVSwitches");
      if (cluster_.nodes < 2) return std::string("NVLSTree needs more than one node");
      break;
    case Algorithm::collnet_direct:
    case Algorithm::collnet_chain:
      if (cluster_.nodes < 2) return std::string("CollNet needs more than one node");
      if (!cluster_.collnet) return std::string("CollNet needs SHARP-capable NICs and NCCL_COLLNET_ENABLE=1");
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

bool SimModel::corrupts(Algorithm, Protocol p) const {
  return p == Protocol::ll128 && !cluster_.ll128_safe();
}

double SimModel::latency_us(Collective c, Algorithm a, Protocol p) const {
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

void SimModel::apply_faults(const std::set<std::string>& used_nics) {
  std::vector<int> spanned = cluster_.node_ids;
  if (spanned.empty())
    for (int n = 0; n < cluster_.nodes; ++n) spanned.push_back(n);
  for (const auto& f : cluster_.faults) {
    if (std::find(spanned.begin(), spanned.end(), f.node) == spanned.end()) continue;
    switch (f.kind) {
      case SimFault::Kind::nic_rate:
        if (used_nics.count(f.nic)) fault_net_ = std::min(fault_net_, f.fraction);
        break;
      case SimFault::Kind::nvlink:
        // One GPU of a node in the communicator sends over PCIe to its NIC, not over NVLink.
        if (cluster_.nvlink && cluster_.gpus_per_node > 1 && cluster_.holds_gpu(f.device))
          fault_intra_ = std::min(fault_intra_, f.fraction);
        break;
      case SimFault::Kind::gpu_clock:
        if (!cluster_.holds_gpu(f.device)) break;
        fault_intra_ = std::min(fault_intra_, f.fraction);
        fault_net_ = std::min(fault_net_, f.fraction);
        break;
    }
  }
}

double SimModel::bus_gbps(Collective c, Algorithm a, Protocol p, int channels, bool truth) const {
  const int gen = cluster_.generation(), ni = node_index(cluster_.nodes);
  const bool multi = cluster_.nodes > 1;
  const double intra = cluster_.intra_gbps * (truth ? fault_intra_ : 1.0);
  const double net = multi ? net_gbps_ * (truth ? fault_net_ : 1.0) : std::numeric_limits<double>::infinity();
  const double nvls_intra = intra * (c == Collective::allreduce ? 1.5 : 1.15) * kNvlsEfficiency;
  double total = 0.0;
  switch (a) {
    case Algorithm::ring:
      total = std::min(intra, net);
      break;
    case Algorithm::tree:
      total = std::min(intra, net) * 0.9;
      break;
    case Algorithm::nvls:
      total = std::min(nvls_intra, net);
      break;
    case Algorithm::nvls_tree:
      total = std::min(nvls_intra, net) * 0.95;
      break;
    case Algorithm::collnet_direct:
      total = std::min(intra, net * 1.9) * 0.9;  // SHARP reduces in the switch: half the data per node
      break;
    case Algorithm::collnet_chain:
      total = std::min(intra, net * 1.9) * 0.8;
      break;
    case Algorithm::pat:
      total = std::min(intra, net) * 0.9;
      break;
  }
  const int max_ch = std::max(1, cluster_.max_channels);
  const int ch = channels <= 0 ? max_ch : std::min(channels, max_ch);
  // A channel can drive somewhat more than its even share of the links, so the last few add little.
  double bw = std::min(total, ch * total / max_ch * 1.25);
  if (a == Algorithm::tree && p == Protocol::simple) bw = std::min(bw, ch * kTreeSimplePerCh[gen][ni]);
  switch (p) {
    case Protocol::ll:
      return std::min(bw * 0.5, kLLMaxBw[gen][ni]);
    case Protocol::ll128: {
      double per_ch = a == Algorithm::tree ? kTreeLL128PerCh[gen][ni] : kRingLL128PerCh[gen];
      return std::min(bw * 0.92, ch * per_ch);
    }
    case Protocol::simple:
      return bw;
  }
  return bw;
}

double SimModel::nccl_estimate_us(Collective c, uint64_t bytes, Algorithm a, Protocol p, int channels) const {
  double factor = nccl::bus_bandwidth_factor(c, cluster_.ranks());
  double bw = bus_gbps(c, a, p, channels, false);
  double transfer = factor > 0.0 ? static_cast<double>(bytes) * factor / (1000.0 * bw) : 0.0;
  return latency_us(c, a, p) + transfer;
}

int SimModel::default_channels(uint64_t bytes) const {
  uint64_t ch = bytes / kBytesPerChannel;
  return static_cast<int>(
      std::clamp<uint64_t>(ch, 1, static_cast<uint64_t>(std::max(1, cluster_.max_channels))));
}

std::optional<SimChoice> SimModel::resolve(Collective c, uint64_t bytes, const Candidate& cand,
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
      double t = nccl_estimate_us(c, bytes, a, p);  // strict <: ties go to the lower index, as in NCCL
      if (t < best_time) best_time = t, best = SimChoice{a, p, 0};
    }
  }
  if (!best) {
    if (why) *why = reason.empty() ? "no usable algorithm/protocol" : reason;
    return std::nullopt;
  }
  best->channels = cand.channels > 0 ? std::min(cand.channels, std::max(1, cluster_.max_channels))
                                     : default_channels(bytes);
  return best;
}

SimChoice SimModel::nccl_default(Collective c, uint64_t bytes) const {
  auto choice = resolve(c, bytes, Candidate{});
  // Ring/Simple runs every collective on any cluster of two or more ranks; one rank is a local copy.
  return choice ? *choice : SimChoice{Algorithm::ring, Protocol::simple, 1};
}

std::array<float, nccl::kNumAlgorithms * nccl::kNumProtocols> SimModel::cost_table(Collective c,
                                                                                   uint64_t bytes) const {
  std::array<float, nccl::kNumAlgorithms * nccl::kNumProtocols> t;
  t.fill(-1.0f);
  for (Algorithm a : nccl::kAllAlgorithms)
    for (Protocol p : nccl::kAllProtocols) {
      if (unsupported(c, a, p) || corrupts(a, p)) continue;
      t[static_cast<size_t>(ai(a) * nccl::kNumProtocols + pi(p))] =
          static_cast<float>(nccl_estimate_us(c, bytes, a, p));
    }
  return t;
}

double SimModel::deviation(uint64_t tag, Collective c, Algorithm a, Protocol p) const {
  double u = random::uniform(random::hash(
      {deviations_.seed, tag, static_cast<uint64_t>(c), static_cast<uint64_t>(a), static_cast<uint64_t>(p),
       static_cast<uint64_t>(cluster_.nodes), static_cast<uint64_t>(cluster_.gpus_per_node)}));
  return 2.0 * u - 1.0;  // [-1, 1)
}

double SimModel::true_time_us(Collective c, uint64_t bytes, const SimChoice& ch) const {
  if (cluster_.ranks() < 2) return 2.0 + static_cast<double>(bytes) / (1000.0 * 1000.0);  // device-local copy
  if (!deviations_.enabled) {
    const double factor = nccl::bus_bandwidth_factor(c, cluster_.ranks());
    const double bw = bus_gbps(c, ch.algorithm, ch.protocol, ch.channels, true);
    return latency_us(c, ch.algorithm, ch.protocol) +
           (factor > 0.0 ? static_cast<double>(bytes) * factor / (1000.0 * bw) : 0.0);
  }
  const double m = deviations_.magnitude;
  double lat_factor = 1.0 + m * deviation(1, c, ch.algorithm, ch.protocol);
  double bw_factor = 1.0 + m * (deviation(2, c, ch.algorithm, ch.protocol) < 0
                                    ? deviation(2, c, ch.algorithm, ch.protocol)
                                    : 0.5 * deviation(2, c, ch.algorithm, ch.protocol));
  double factor = nccl::bus_bandwidth_factor(c, cluster_.ranks());
  double bw = bus_gbps(c, ch.algorithm, ch.protocol, ch.channels, true) * bw_factor;
  double transfer = static_cast<double>(bytes) * factor / (1000.0 * bw);
  return latency_us(c, ch.algorithm, ch.protocol) * lat_factor +
         deviations_.channel_overhead_us * ch.channels + transfer;
}

SimChoice SimModel::best_true(Collective c, uint64_t bytes) const {
  SimChoice best = nccl_default(c, bytes);
  double best_time = true_time_us(c, bytes, best);
  std::vector<int> channel_counts;
  for (int ch = 1; ch < cluster_.max_channels; ch *= 2) channel_counts.push_back(ch);
  channel_counts.push_back(std::max(1, cluster_.max_channels));
  for (Algorithm a : nccl::kAllAlgorithms)
    for (Protocol p : nccl::kAllProtocols) {
      if (unsupported(c, a, p) || corrupts(a, p)) continue;
      for (int ch : channel_counts) {
        SimChoice choice{a, p, ch};
        double t = true_time_us(c, bytes, choice);
        if (t < best_time) best_time = t, best = choice;
      }
    }
  return best;
}

}  // namespace autotune::sim

namespace autotune::sim {

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
