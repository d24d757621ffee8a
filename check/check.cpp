#include "check/check.hpp"

#include <algorithm>

#include "common/input_error.hpp"
#include "runners/bandwidth.hpp"
#include "topology/fabric_setup.hpp"

namespace autotune::check {
namespace {

void check_context(const CheckContext& c) {
  if (c.nodes.empty()) throw InputError("<check>", 0, "expected at least one node to check, found none");
  if (c.gpus_per_node < 1)
    throw InputError("<check>", 0,
                     "expected at least one GPU per node, found " + std::to_string(c.gpus_per_node));
  for (size_t n = 0; n < c.nodes.size(); ++n)
    if (static_cast<int>(c.nodes[n].topology.gpus.size()) < c.gpus_per_node)
      throw InputError(c.nodes[n].topology.origin, 0,
                       "node " + std::to_string(n) + ": expected at least " +
                           std::to_string(c.gpus_per_node) + " GPUs (ranks per node), its probe found " +
                           std::to_string(c.nodes[n].topology.gpus.size()));
}

// One pass: every group's bus bandwidth, or why it could not measure.
PassResult measure(const Pass& pass, const CheckOptions& o, runners::Runner& runner) {
  PassResult r{pass, {}, {}};
  runners::MeasureRequest request;
  const nccl::Operation op = pass_operation(pass.kind);
  request.set_operation(op);
  request.bytes = o.bytes;
  request.repetitions = o.repetitions;
  const runners::Measurement m = runner.run(std::vector<runners::MeasureRequest>{request}).at(0);
  if (m.outcome != runners::Outcome::ok) {
    r.error = std::string(runners::name(m.outcome)) + (m.detail.empty() ? "" : ": " + m.detail);
    return r;
  }
  // One group that is the whole job reports no per-group times: its own time is the group's.
  const std::vector<double> times =
      m.group_times_us.empty() ? std::vector<double>{m.median_us()} : m.group_times_us;
  for (double us : times)
    r.group_busbw_gbps.push_back(runners::busbw_gbps(op, pass.shape.ranks, request.bytes, us));
  return r;
}

std::vector<PassResult> run_passes(const CheckOptions& o, const CheckContext& c,
                                   const CheckProgressFn& progress, CheckReport& report) {
  const std::vector<Pass> plan = plan_passes(static_cast<int>(c.nodes.size()), c.gpus_per_node);
  const Clock& clock = c.clock ? *c.clock : steady_clock();
  const auto start = clock.now();
  std::vector<PassResult> out;
  for (const auto& pass : plan) {
    auto runner = c.make_runner(pass);
    if (report.runner.empty()) {
      const runners::RunnerInfo info = runner->info();
      report.runner = info.description;
      // The runner knows what it runs on: the stand-in NCCL measures nothing, and check must not say so.
      if (!info.source.empty()) report.source = info.source;
    }
    out.push_back(measure(pass, o, *runner));
    if (!progress) continue;
    const int done = static_cast<int>(out.size()), total = static_cast<int>(plan.size());
    const double elapsed = clock.seconds_since(start);
    progress({done, total, pass_label(pass), elapsed, elapsed / done * (total - done)});
  }
  return out;
}

// The settings every node agrees on; a node whose choice differs from the most common one is a finding.
std::map<std::string, std::string> agreed_fabric(std::vector<NodeReport>& nodes, const std::string& source) {
  std::map<std::map<std::string, std::string>, int> votes;
  for (const auto& n : nodes) ++votes[n.fabric_env];
  const auto common = std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) {
                        return a.second < b.second;
                      })->first;
  std::map<std::string, std::string> agreed = common;
  for (auto& n : nodes) {
    if (n.fabric_env == common) continue;
    for (auto it = agreed.begin(); it != agreed.end();) {
      auto mine = n.fabric_env.find(it->first);
      it = mine == n.fabric_env.end() || mine->second != it->second ? agreed.erase(it) : std::next(it);
    }
    std::string theirs, most;
    for (const auto& [k, v] : n.fabric_env) theirs += (theirs.empty() ? "" : " ") + k + "=" + v;
    for (const auto& [k, v] : common) most += (most.empty() ? "" : " ") + k + "=" + v;
    n.health.findings.push_back({"fabric_setup_differs", topology::Severity::warn, "node",
                                 "this node: " + (theirs.empty() ? std::string("none") : theirs) +
                                     "; most nodes: " + (most.empty() ? std::string("none") : most),
                                 source,
                                 "the node's fabric settings differ from the other nodes' (one value must "
                                 "serve every node): check its "
                                 "RoCE GID table and interfaces (nccl-autotune probe on the node)"});
  }
  return agreed;
}

}  // namespace

bool CheckReport::blocks() const {
  return std::any_of(nodes.begin(), nodes.end(),
                     [](const NodeReport& n) { return !topology::may_calibrate(n.health); });
}

std::string_view CheckReport::status() const {
  if (blocks()) return "block";
  const bool warned =
      std::any_of(nodes.begin(), nodes.end(), [](const NodeReport& n) { return !n.health.findings.empty(); });
  return warned ? "warn" : "ok";
}

CheckReport run_check(const CheckOptions& o, const CheckContext& c, const CheckProgressFn& progress) {
  check_context(c);
  CheckReport report;
  report.source = c.source;
  report.gpus_per_node = c.gpus_per_node;
  report.bytes = o.bytes;
  report.measured = o.measure;
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    NodeReport r;
    r.health = {static_cast<int>(n), c.nodes[n].host, topology::health_findings(c.nodes[n].topology)};
    r.hardware = hardware_figures(c.nodes[n].topology, c.gpus_per_node);
    r.fabric_env = topology::choose_fabric_setup(c.nodes[n].topology).env();
    report.nodes.push_back(std::move(r));
  }
  report.fabric_env = agreed_fabric(report.nodes, "check: " + c.source);
  if (!o.measure) return report;
  report.passes = run_passes(o, c, progress, report);
  const std::string source = "check: " + report.source;
  const int nodes = static_cast<int>(c.nodes.size());
  report.baselines = collect_baselines(report.passes, nodes, c.gpus_per_node);
  std::vector<HardwareFigures> hardware;
  for (const auto& n : report.nodes) hardware.push_back(n.hardware);
  const auto found = baseline_findings(report.baselines, hardware, o.thresholds, source);
  for (size_t n = 0; n < report.nodes.size(); ++n) {
    NodeReport& r = report.nodes[n];
    r.baselines = report.baselines.nodes[n];
    r.health.findings.insert(r.health.findings.end(), found[n].begin(), found[n].end());
    for (const auto& p : report.passes)
      if (!p.error.empty())
        r.health.findings.push_back({"check_failed", topology::Severity::block, "node",
                                     pass_label(p.pass) + ": " + p.error, source,
                                     "a pass of check could not measure on this job: " + p.error +
                                         " (rerun check; a node that keeps failing is the one to look at)"});
  }
  return report;
}

check::ClusterHealth cluster_health(const CheckReport& report) {
  check::ClusterHealth h;
  const char* what = report.measured          ? ""
                     : report.journal.empty() ? ", health only"
                                              : ", calibration journal";
  h.checked_by = "check (" + report.source + what + ")";
  for (const auto& n : report.nodes) h.nodes.push_back(n.health);
  h.fabric_env = report.fabric_env;
  return h;
}

}  // namespace autotune::check
