#include "simulator/sim_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "common/input_error.hpp"
#include "nccl/ib_hca_spec.hpp"
#include "simulator/hardware_model.hpp"
#include "simulator/sim_constants.hpp"
#include "simulator/sim_random.hpp"

namespace autotune::sim {

using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;
using runners::Candidate;

namespace {

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

// The communicator's cluster under the process settings NCCL reads once per process.
ProcessView apply_process_settings(SimCluster cluster, const std::map<std::string, std::string>& env,
                                   uint64_t seed) {
  const std::vector<SimNic> all_nics = cluster.nics;
  ProcessView view;
  double cross_nic_factor = 1.0;
  bool collnet_enabled = false;
  for (const auto& [name, value] : env) {
    if (name == "NCCL_IB_HCA") {
      cluster.nics = select_nics(all_nics, value);
    } else if (name == "NCCL_CROSS_NIC") {
      int v = parse_env_int(name, value, 0, 2);
      // NCCL_CROSS_NIC=2 (the default) lets NCCL pick; forcing 0 or 1 helps or hurts a little depending on
      // how the fabric is wired, which the model cannot know: a small seeded effect of up to +-3%.
      if (v != 2)
        cross_nic_factor =
            1.0 + 0.06 * (random::uniform(random::hash({seed, 77, static_cast<uint64_t>(v)})) - 0.5);
    } else if (name == "NCCL_MAX_NCHANNELS") {
      cluster.max_channels = std::min(cluster.max_channels, parse_env_int(name, value, 1, 64));
    } else if (name == "NCCL_MIN_NCHANNELS") {
      parse_env_int(name, value, 1, 64);  // only raises NCCL's lower bound; our default already uses the max
    } else if (name == "NCCL_NVLS_ENABLE") {
      if (parse_env_int(name, value, 0, 2) == 0) cluster.nvls = false;
    } else if (name == "NCCL_COLLNET_ENABLE") {
      collnet_enabled = parse_env_int(name, value, 0, 1) == 1;
    } else if (name == "NCCL_ALGO" || name == "NCCL_PROTO") {
      try {  // NCCL fails communicator init on a value it cannot read
        if (name == "NCCL_ALGO")
          view.algo = nccl::parse_algo_spec(value);
        else
          view.proto = nccl::parse_proto_spec(value);
      } catch (const InputError& e) {
        throw InputError(env_context(name), 0, e.message());
      }
    }
    // Anything else does not change performance in this model (NCCL ignores names it does not know).
  }
  cluster.collnet = cluster.collnet && collnet_enabled;
  view.p2p = read_p2p_settings(env);
  if (cluster.nodes > 1 && !cluster.nics.empty()) {
    BlockNet own = group_net(all_nics, cluster);
    view.net_gbps = own.gbps * cross_nic_factor * (view.p2p.gdr ? 1.0 : kNoGdrShare);
    view.used_nics = std::move(own.nics);
  } else if (cluster.nodes > 1) {
    view.net_gbps = 3.0;  // no IB device left: NCCL falls back to its socket transport
  }
  view.cluster = std::move(cluster);
  return view;
}

}  // namespace

std::vector<std::string> modelled_env_names() {
  std::vector<std::string> names = {"NCCL_ALGO",        "NCCL_PROTO",         "NCCL_IB_HCA",
                                    "NCCL_CROSS_NIC",   "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS",
                                    "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE"};
  for (auto& name : p2p_env_names()) names.push_back(std::move(name));
  return names;
}

SimModel::SimModel(SimCluster cluster, const std::map<std::string, std::string>& env,
                   SimDeviations deviations)
    : SimModel(apply_process_settings(std::move(cluster), env, deviations.seed), deviations) {}

SimModel::SimModel(ProcessView view, SimDeviations deviations)
    : deviations_(deviations),
      algo_(std::move(view.algo)),
      proto_(std::move(view.proto)),
      estimate_(std::move(view.cluster), view.net_gbps),
      p2p_(view.p2p) {
  apply_faults(view.used_nics);
  links_.intra_line_gbps = cluster().intra_line_gbps;
  links_.intra_scale = fault_intra_;
  links_.net_gbps = effective_net_gbps() * fault_net_;
}

void SimModel::apply_faults(const std::set<std::string>& used_nics) {
  std::vector<int> spanned = cluster().node_ids;
  if (spanned.empty())
    for (int n = 0; n < cluster().nodes; ++n) spanned.push_back(n);
  for (const auto& f : cluster().faults) {
    if (f.kind == SimFault::Kind::spine) {
      if (static_cast<int>(spanned.size()) > f.beyond) fault_net_ = std::min(fault_net_, f.fraction);
      continue;
    }
    if (std::find(spanned.begin(), spanned.end(), f.node) == spanned.end()) continue;
    switch (f.kind) {
      case SimFault::Kind::spine:
        break;
      case SimFault::Kind::nic_rate:
        if (used_nics.count(f.nic)) fault_net_ = std::min(fault_net_, f.fraction);
        break;
      case SimFault::Kind::nvlink:
        // One GPU of a node in the communicator sends over PCIe to its NIC, not over NVLink.
        if (cluster().nvlink && cluster().gpus_per_node > 1 && cluster().holds_gpu(f.device))
          fault_intra_ = std::min(fault_intra_, f.fraction);
        break;
      case SimFault::Kind::gpu_clock:
        if (!cluster().holds_gpu(f.device)) break;
        fault_intra_ = std::min(fault_intra_, f.fraction);
        fault_net_ = std::min(fault_net_, f.fraction);
        break;
    }
  }
}

bool SimModel::selected(Collective c, Algorithm a, Protocol p) const {
  if (algo_ && !nccl::selects(*algo_, c, a)) return false;
  if (proto_ && !nccl::selects(*proto_, c, p)) return false;
  return !corrupts(a, p) || (proto_ && nccl::selects_explicitly(*proto_, c, p));
}

std::optional<std::string> SimModel::unsupported(Collective c, Algorithm a, Protocol p) const {
  // The variables first: what the user set is the reason they need to see.
  if (algo_ && !nccl::selects(*algo_, c, a))
    return "NCCL_ALGO=" + nccl::format_algo_spec(*algo_) + " leaves " + std::string(nccl::nccl_name(a)) +
           " out";
  if (proto_ && !nccl::selects(*proto_, c, p))
    return "NCCL_PROTO=" + nccl::format_proto_spec(*proto_) + " leaves " + std::string(nccl::nccl_name(p)) +
           " out";
  return estimate_.unsupported(c, a, p);
}

std::optional<SimChoice> SimModel::resolve(Collective c, uint64_t bytes, const Candidate& candidate,
                                           std::string* why) const {
  if (!algo_ && !proto_) return estimate_.resolve(c, bytes, candidate, why);
  // NCCL's choice among what the variables leave it (a forced part must be among them): the smallest
  // estimate, ties to the lower index.
  std::optional<SimChoice> best;
  double best_us = std::numeric_limits<double>::infinity();
  std::string reason;
  for (Algorithm a : nccl::kAllAlgorithms)
    for (Protocol p : nccl::kAllProtocols) {
      if ((candidate.algorithm && *candidate.algorithm != a) ||
          (candidate.protocol && *candidate.protocol != p))
        continue;
      if (auto r = unsupported(c, a, p)) {
        if (reason.empty()) reason = *r;
        continue;
      }
      if (corrupts(a, p) && !candidate.protocol && !selected(c, a, p)) continue;
      Candidate forced = candidate;
      forced.algorithm = a, forced.protocol = p;
      auto choice = estimate_.resolve(c, bytes, forced, why);
      const double us = estimate_.estimate_us(c, bytes, a, p);
      if (choice && us < best_us) best_us = us, best = choice;
    }
  if (!best && why) *why = reason.empty() ? "no usable algorithm/protocol" : reason;
  return best;
}

SimChoice SimModel::nccl_default(Collective c, uint64_t bytes) const {
  auto choice = resolve(c, bytes, Candidate{});
  return choice ? *choice : estimate_.default_choice(c, bytes);
}

CostTable SimModel::cost_table(Collective c, uint64_t bytes) const {
  CostTable t = estimate_.cost_table(c, bytes);
  for (Algorithm a : nccl::kAllAlgorithms)
    for (Protocol p : nccl::kAllProtocols) {
      float& cell = t[static_cast<size_t>(static_cast<int>(a) * nccl::kNumProtocols + static_cast<int>(p))];
      if (unsupported(c, a, p) || !selected(c, a, p))
        cell = -1.0f;
      else if (cell < 0.0f)
        cell = static_cast<float>(estimate_.estimate_us(c, bytes, a, p));
    }
  return t;
}

double SimModel::deviation(uint64_t tag, Collective c, Algorithm a, Protocol p) const {
  double u = random::uniform(random::hash(
      {deviations_.seed, tag, static_cast<uint64_t>(c), static_cast<uint64_t>(a), static_cast<uint64_t>(p),
       static_cast<uint64_t>(cluster().nodes), static_cast<uint64_t>(cluster().gpus_per_node)}));
  return 2.0 * u - 1.0;  // [-1, 1)
}

double SimModel::true_bus_gbps(Collective c, const SimChoice& ch) const {
  return true_peak_busbw(cluster(), links_, c, ch.algorithm, ch.protocol, ch.channels);
}

double SimModel::true_time_us(Collective c, uint64_t bytes, const SimChoice& ch) const {
  if (cluster().ranks() < 2)
    return 2.0 + static_cast<double>(bytes) / (1000.0 * 1000.0);  // device-local copy
  const double factor = nccl::bus_bandwidth_factor(c, cluster().ranks());
  double bw = true_bus_gbps(c, ch), latency = estimate_.latency_us(c, ch.algorithm, ch.protocol);
  double channel_cost = 0.0;
  if (deviations_.enabled) {
    const double m = deviations_.magnitude, d = deviation(2, c, ch.algorithm, ch.protocol);
    latency *= 1.0 + m * deviation(1, c, ch.algorithm, ch.protocol);
    // The published figures pin Simple's bandwidth down to a few percent; LL and LL128 they do not.
    bw *= ch.protocol == Protocol::simple ? 1.0 + 0.1 * m * d : 1.0 + m * (d < 0 ? d : 0.5 * d);
    bw = std::min(bw, max_busbw_gbps(cluster(), links_, c, ch.algorithm));
    channel_cost = deviations_.channel_overhead_us * ch.channels;
  }
  // Simple's steps are NCCL_BUFFSIZE / NCCL_STEPS (init.cc computeBuffSizes, 4 MiB by default): a larger
  // buffer moves larger chunks, so the pipeline takes longer to fill and drain. (A smaller one would trade a
  // shorter fill for more per-step overhead; the model leaves it at the default's cost.)
  const double fill_scale =
      ch.protocol == Protocol::simple
          ? std::max(1.0, static_cast<double>(p2p_.buffsize) / static_cast<double>(1 << 22))
          : 1.0;
  const double moved = factor > 0.0 ? static_cast<double>(bytes) * factor +
                                          fill_scale * pipeline_fill_bytes(c, cluster().ranks(), bytes)
                                    : 0.0;
  return latency + channel_cost + moved / (1000.0 * bw);
}

double SimModel::p2p_time_us(nccl::Operation op, uint64_t bytes) const {
  return sim::p2p_time_us(cluster(), links_, p2p_, op, bytes);
}

double SimModel::p2p_traffic_time_us(const P2pTraffic& t) const {
  return sim::p2p_traffic_time_us(cluster(), links_, p2p_, t);
}

SimChoice SimModel::best_true(Collective c, uint64_t bytes) const {
  SimChoice best = nccl_default(c, bytes);
  double best_time = true_time_us(c, bytes, best);
  std::vector<int> channel_counts;
  for (int ch = 1; ch < cluster().max_channels; ch *= 2) channel_counts.push_back(ch);
  channel_counts.push_back(std::max(1, cluster().max_channels));
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
