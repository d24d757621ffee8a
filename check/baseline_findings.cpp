#include "check/baseline_findings.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include "common/text.hpp"

namespace autotune::check {
namespace {

using topology::HealthFinding;
using topology::Severity;

constexpr CheckKind kKinds[] = {
    {"gpu_bandwidth_low", "block below 80% of the median, warn below 90%",
     "a GPU's best pair all-reduce (1x2, two pairings) against the median of every GPU of the job"},
    {"nic_bandwidth_low", "block below 80% of the median, warn below 90%",
     "a rail's best all-reduce between two nodes (2x1, every rail at once, two or three pairings of the "
     "nodes) against the median of every rail of the job, where the rail's GPU is not slow itself"},
    {"nic_ring_low", "block below 80% of the median, warn below 90%",
     "a rail's send/recv ring across every node (Nx1, every rail at once) against the median of the rails' "
     "rings, where no pair of nodes on that rail (2x1) and no GPU of it was slow: the rail's NICs are named "
     "on every node, as a ring cannot tell which node's it is"},
    {"node_allreduce_low", "block below 80% of the median, warn below 90%",
     "the node's all-reduce (1xG) against the median of the nodes, where no one GPU explains it"},
    {"allreduce_below_hardware", "warn",
     "the node's all-reduce below 60% of what a ring reaches over its links in the fitted model (or the PCIe "
     "link)"},
    {"rail_below_hardware", "warn",
     "a rail below 60% of its NICs' active port payload rate (shared among the rails that use them)"},
    {"fabric_setup_differs", "warn",
     "the node's NCCL_IB_GID_INDEX or NCCL_SOCKET_IFNAME choice differs from the other nodes'"},
    {"check_failed", "block", "a pass could not measure (NCCL error, wrong result, timeout)"},
    {"calibration_group_slow", "block below 80% of the median, warn below 90%",
     "a group of a shape a calibration measured as several groups at once (a --parallelism layout) against "
     "the shape's median group: per measurement of 1 MiB and up its time over the median group's, the median "
     "over the shape's measurements; named on each node of the group, a block only where the group is one node or "
     "a slow group of another shape shares the node (`check --journal`, tune's summary)"},
};

struct Judge {
  const Thresholds& t;
  const std::string& source;

  static double ratio(double value, double median) { return median > 0.0 ? value / median : 1.0; }
  bool slow(const std::optional<double>& v, double median) const {
    return v && median > 0.0 && *v < t.warn * median;
  }
  Severity severity(double r) const { return r < t.block ? Severity::block : Severity::warn; }
  HealthFinding finding(std::string kind, Severity s, std::string device, std::string reading,
                        std::string message) const {
    return {std::move(kind), s, std::move(device), std::move(reading), source, std::move(message)};
  }
};

std::string percent(double r) {
  return fmt::format("{:.0f}%", r * 100.0);
}

// The rail's NICs as a device name: "mlx5_1", "mlx5_0,mlx5_1", or "rail 3" when the node has none.
std::string rail_device(const HardwareFigures& hw, size_t rail) {
  if (rail < hw.rail_nics.size() && !hw.rail_nics[rail].empty()) return join(hw.rail_nics[rail], ",");
  return "rail " + std::to_string(rail);
}

struct NodeJudgement {
  const Baselines& b;
  const NodeBaselines& nb;
  const HardwareFigures& hw;
  const Judge& judge;
  std::vector<HealthFinding> out;
  std::vector<bool> gpu_slow;

  void gpus() {
    const bool pairs = b.gpu_median > 0.0;
    const bool node_slow = judge.slow(nb.allreduce_gbps, b.allreduce_median);
    gpu_slow.assign(nb.gpu_gbps.size(), false);
    for (size_t l = 0; l < nb.gpu_gbps.size(); ++l) {
      const bool rail_slow = judge.slow(nb.rail_gbps[l], b.rail_median);
      // Without pairs (fewer than four GPUs) a GPU slow both inside the node and to the network is the one.
      const bool slow = pairs ? judge.slow(nb.gpu_gbps[l], b.gpu_median) : node_slow && rail_slow;
      if (!slow) continue;
      gpu_slow[l] = true;
      double r = 1.0;
      std::vector<std::string> reading;
      if (pairs) {
        r = Judge::ratio(*nb.gpu_gbps[l], b.gpu_median);
        reading.push_back(fmt::format("best GPU pair all-reduce {:.1f} GB/s, {} of the median {:.1f} GB/s",
                                      *nb.gpu_gbps[l], percent(r), b.gpu_median));
      }
      if (node_slow) {
        const double nr = Judge::ratio(*nb.allreduce_gbps, b.allreduce_median);
        if (!pairs) r = nr;
        reading.push_back(fmt::format("the node's all-reduce {:.1f} GB/s, {} of the median",
                                      *nb.allreduce_gbps, percent(nr)));
      }
      if (rail_slow) {
        const double rr = Judge::ratio(*nb.rail_gbps[l], b.rail_median);
        if (!pairs) r = std::min(r, rr);
        reading.push_back(
            fmt::format("its rail {:.1f} GB/s, {} of the median", *nb.rail_gbps[l], percent(rr)));
      }
      out.push_back(judge.finding(
          "gpu_bandwidth_low", judge.severity(r), "GPU" + std::to_string(l), join(reading, "; "),
          fmt::format("GPU{} moves data at {} of the job's median ({} under {}): check its clocks, power and "
                      "NVLinks (nvidia-smi -q -d PERFORMANCE,CLOCK; nccl-autotune probe on the node)",
                      l, percent(r), r < judge.t.block ? "block" : "warn",
                      percent(r < judge.t.block ? judge.t.block : judge.t.warn))));
    }
  }

  void nics(int nodes) {
    // Slow rails whose GPU is fine, by the NICs they use.
    std::map<std::string, std::vector<size_t>> by_nic;
    for (size_t l = 0; l < nb.rail_gbps.size(); ++l)
      if (!gpu_slow[l] && judge.slow(nb.rail_gbps[l], b.rail_median)) by_nic[rail_device(hw, l)].push_back(l);
    for (const auto& [device, rails] : by_nic) {
      double worst = 1.0;
      std::vector<std::string> reading;
      for (size_t l : rails) {
        const double r = Judge::ratio(*nb.rail_gbps[l], b.rail_median);
        worst = std::min(worst, r);
        std::string text = fmt::format("rail {} (GPU{}) {:.1f} GB/s at best, {} of the median {:.1f} GB/s", l,
                                       l, *nb.rail_gbps[l], percent(r), b.rail_median);
        if (l < hw.rail_gbps.size() && hw.rail_gbps[l] > 0.0)
          text += fmt::format(", {} of its share of the port rate ({:.1f} GB/s)",
                              percent(*nb.rail_gbps[l] / hw.rail_gbps[l]), hw.rail_gbps[l]);
        reading.push_back(text);
      }
      std::string message = fmt::format(
          "{} carries {} of the job's median between nodes: check the port's rate, cable and switch port "
          "(ibstat, perfquery)",
          device, percent(worst));
      if (nodes == 2) message += "; with two nodes check cannot tell which node's NIC it is: both are named";
      out.push_back(
          judge.finding("nic_bandwidth_low", judge.severity(worst), device, join(reading, "; "), message));
    }
  }

  bool any_gpu_slow() const { return std::find(gpu_slow.begin(), gpu_slow.end(), true) != gpu_slow.end(); }

  void node() {
    if (!judge.slow(nb.allreduce_gbps, b.allreduce_median) || any_gpu_slow()) return;
    const double r = Judge::ratio(*nb.allreduce_gbps, b.allreduce_median);
    out.push_back(judge.finding(
        "node_allreduce_low", judge.severity(r), "node",
        fmt::format("all-reduce {:.1f} GB/s, {} of the median {:.1f} GB/s", *nb.allreduce_gbps, percent(r),
                    b.allreduce_median),
        fmt::format("the node's all-reduce runs at {} of the job's median and no one GPU explains it: check "
                    "NVSwitches and NVLinks (nvidia-smi nvlink -s, nvidia-smi -q), then probe the node",
                    percent(r))));
  }

  void hardware() {
    const double t = judge.t.hardware;
    if (nb.allreduce_gbps && hw.intra_gbps > 0.0 && *nb.allreduce_gbps < t * hw.intra_gbps &&
        !judge.slow(nb.allreduce_gbps, b.allreduce_median) && !any_gpu_slow())
      out.push_back(judge.finding(
          "allreduce_below_hardware", Severity::warn, "node",
          fmt::format("all-reduce {:.1f} GB/s, {} of the {:.1f} GB/s per GPU the probe's links allow",
                      *nb.allreduce_gbps, percent(*nb.allreduce_gbps / hw.intra_gbps), hw.intra_gbps),
          fmt::format(
              "the node's all-reduce is below {} of what its GPUs' links allow (as on every node near "
              "the median): check the NVLink generation and count (probe) and NCCL's settings",
              percent(t))));
    std::map<std::string, std::vector<std::string>> by_nic;
    for (size_t l = 0; l < nb.rail_gbps.size() && l < hw.rail_gbps.size(); ++l) {
      const auto& v = nb.rail_gbps[l];
      if (!v || hw.rail_gbps[l] <= 0.0 || *v >= t * hw.rail_gbps[l] || judge.slow(v, b.rail_median) ||
          gpu_slow[l])
        continue;
      by_nic[rail_device(hw, l)].push_back(
          fmt::format("rail {} {:.1f} GB/s, {} of its share of the port rate "
                      "({:.1f} GB/s)",
                      l, *v, percent(*v / hw.rail_gbps[l]), hw.rail_gbps[l]));
    }
    for (const auto& [device, reading] : by_nic)
      out.push_back(judge.finding(
          "rail_below_hardware", Severity::warn, device, join(reading, "; "),
          fmt::format(
              "{} carries less than {} of its port rate between nodes: check the fabric's routing, the "
              "switch ports and GPUDirect RDMA (probe)",
              device, percent(t))));
  }
};

// A rail whose ring across every node is slow while nothing else on it was: a NIC slow only in
// point-to-point traffic. The ring cannot tell which node's, so every node's NICs of that rail are named.
void ring_findings(const Baselines& b, const std::vector<HardwareFigures>& hardware, const Judge& judge,
                   const std::vector<bool>& rail_explained, std::vector<std::vector<HealthFinding>>& out) {
  for (size_t l = 0; l < rail_explained.size(); ++l) {
    if (rail_explained[l] || b.nodes.empty() || l >= b.nodes.front().ring_gbps.size()) continue;
    const std::optional<double>& ring = b.nodes.front().ring_gbps[l];
    if (!judge.slow(ring, b.ring_median)) continue;
    const double r = Judge::ratio(*ring, b.ring_median);
    for (size_t n = 0; n < b.nodes.size(); ++n) {
      const std::string device = rail_device(hardware.at(n), l);
      out[n].push_back(judge.finding(
          "nic_ring_low", judge.severity(r), device,
          fmt::format("rail {} send/recv ring across every node {:.1f} GB/s, {} of the rings' median {:.1f} "
                      "GB/s; its all-reduce between pairs of nodes was not slow",
                      l, *ring, percent(r), b.ring_median),
          fmt::format(
              "{} is on a rail whose point-to-point ring runs at {} of the median while its "
              "all-reduces do not: one node's NIC on this rail is slow for send/recv (every node's is "
              "named; a ring cannot tell which): check the ports' rate and errors (ibstat, perfquery)",
              device, percent(r))));
    }
  }
}

}  // namespace

std::span<const CheckKind> check_kinds() {
  return kKinds;
}

std::vector<std::vector<HealthFinding>> baseline_findings(const Baselines& b,
                                                          const std::vector<HardwareFigures>& hardware,
                                                          const Thresholds& thresholds,
                                                          const std::string& source) {
  const Judge judge{thresholds, source};
  std::vector<std::vector<HealthFinding>> out;
  const int nodes = static_cast<int>(b.nodes.size());
  std::vector<bool> rail_explained;  // per rail: a pair of nodes or a GPU on it was slow somewhere
  for (size_t n = 0; n < b.nodes.size(); ++n) {
    NodeJudgement j{b, b.nodes[n], hardware.at(n), judge, {}, {}};
    j.gpus();
    j.nics(nodes);
    j.node();
    j.hardware();
    out.push_back(std::move(j.out));
    rail_explained.resize(std::max(rail_explained.size(), j.gpu_slow.size()), false);
    for (size_t l = 0; l < j.gpu_slow.size(); ++l)
      if (j.gpu_slow[l] || judge.slow(b.nodes[n].rail_gbps[l], b.rail_median)) rail_explained[l] = true;
  }
  ring_findings(b, hardware, judge, rail_explained, out);
  return out;
}

}  // namespace autotune::check
