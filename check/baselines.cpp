#include "check/baselines.hpp"

#include <algorithm>
#include <map>

#include "common/input_error.hpp"
#include "simulator/hardware_model.hpp"
#include "simulator/sim_cluster.hpp"
#include "topology/analysis.hpp"

namespace autotune::check {
namespace {

void keep_best(std::optional<double>& slot, double value) {
  if (!slot || value > *slot) slot = value;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void collect(const std::vector<std::optional<double>>& values, std::vector<double>& into) {
  for (const auto& v : values)
    if (v) into.push_back(*v);
}

// The NICs each rail (GPU) uses: its nearest where the probe tells them apart from the rest, else in order.
std::vector<std::vector<std::string>> nics_of_rails(const topology::Topology& node, int gpus) {
  const auto analysis = topology::analyze(node);
  const int nics = static_cast<int>(node.nics.size());
  std::vector<std::vector<std::string>> out(static_cast<size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    const auto& near = static_cast<size_t>(g) < analysis.nearest_nics.size() ? analysis.nearest_nics[g]
                                                                             : std::vector<std::string>{};
    if (!near.empty() && (static_cast<int>(near.size()) < nics || nics == 1)) {
      out[g] = near;
      continue;
    }
    for (int j : sim::rail_nics(nics, gpus, g)) out[g].push_back(node.nics[static_cast<size_t>(j)].name);
  }
  return out;
}

}  // namespace

Baselines collect_baselines(const std::vector<PassResult>& passes, int nodes, int gpus) {
  Baselines b;
  b.nodes.resize(static_cast<size_t>(nodes));
  for (auto& n : b.nodes) n.gpu_gbps.resize(gpus), n.rail_gbps.resize(gpus), n.ring_gbps.resize(gpus);
  for (const auto& p : passes) {
    if (!p.error.empty()) continue;
    const runners::GroupLayout layout = pass_layout(p.pass, nodes, gpus);
    for (int g = 0; g < layout.groups() && g < static_cast<int>(p.group_busbw_gbps.size()); ++g) {
      const double bw = p.group_busbw_gbps[static_cast<size_t>(g)];
      if (p.pass.kind == PassKind::alltoall) keep_best(b.alltoall_gbps, bw);
      for (int n : layout.nodes_of(g))
        for (int l : layout.local_ranks_of(g)) {
          NodeBaselines& nb = b.nodes[static_cast<size_t>(n)];
          if (p.pass.kind == PassKind::node) keep_best(nb.allreduce_gbps, bw);
          if (p.pass.kind == PassKind::gpu_pairs) keep_best(nb.gpu_gbps[l], bw);
          if (p.pass.kind == PassKind::rails) keep_best(nb.rail_gbps[l], bw);
          if (p.pass.kind == PassKind::rings) keep_best(nb.ring_gbps[l], bw);
        }
    }
  }
  std::vector<double> node_values, gpu_values, rail_values, ring_values;
  for (const auto& n : b.nodes) {
    if (n.allreduce_gbps) node_values.push_back(*n.allreduce_gbps);
    collect(n.gpu_gbps, gpu_values);
    collect(n.rail_gbps, rail_values);
    collect(n.ring_gbps, ring_values);
  }
  b.ring_median = median_of(ring_values);
  b.allreduce_median = median_of(node_values);
  b.gpu_median = median_of(gpu_values);
  b.rail_median = median_of(rail_values);
  return b;
}

HardwareFigures hardware_figures(const topology::Topology& node, int gpus) {
  HardwareFigures h;
  if (!node.gpus.empty()) {
    // What a ring all-reduce reaches over these links in the fitted model (the simulator's truth, held to
    // published nccl-tests figures): 370 GB/s on 8x H100, 232 on 8x A100.
    const sim::SimCluster c = sim::describe_cluster(node, 1);
    const sim::Links links{c.intra_line_gbps, 1.0, 0.0};
    h.intra_gbps = c.gpus_per_node > 1
                       ? sim::true_peak_busbw(c, links, nccl::Collective::allreduce, nccl::Algorithm::ring,
                                              nccl::Protocol::simple, 0)
                       : c.intra_gbps;
  }
  h.rail_nics = nics_of_rails(node, gpus);
  // Every rail at once: a NIC several rails use is shared among them.
  std::map<std::string, int> users;
  for (const auto& nics : h.rail_nics)
    for (const auto& n : nics) ++users[n];
  for (const auto& nics : h.rail_nics) {
    double gbps = 0.0;
    for (const auto& name : nics)
      for (const auto& nic : node.nics)
        if (nic.name == name)
          for (const auto& port : nic.ports)
            if (port.state == "ACTIVE") gbps += port.speed_gbps / 8.0 * sim::kNicPayloadShare / users[name];
    h.rail_gbps.push_back(gbps);
  }
  return h;
}

}  // namespace autotune::check
