#include "check/cluster_health.hpp"

#include "common/input_error.hpp"
#include "common/text.hpp"

namespace autotune::check {
namespace {

using topology::Severity;

std::string node_name(const topology::NodeHealth& n) {
  return "node " + std::to_string(n.node) + (n.host.empty() ? "" : " (" + n.host + ")");
}

}  // namespace

std::string describe_blocking(const topology::NodeHealth& node, bool detailed) {
  std::vector<std::string> parts;
  for (const auto& f : node.findings)
    if (f.severity == Severity::block)
      parts.push_back(detailed ? f.device + ": " + f.message : f.device + " " + f.kind);
  return node_name(node) + ": " + join(parts, detailed ? "; " : ", ");
}

std::vector<std::string> describe_findings(const topology::NodeHealth& node) {
  std::vector<std::string> out;
  for (const auto& f : node.findings)
    out.push_back(node_name(node) + ": " + f.device + " " + f.kind + " (" +
                  std::string(topology::severity_name(f.severity)) + "): " + f.message);
  return out;
}

HealthDecision decide_on_health(const ClusterHealth& health, const HealthPolicy& policy) {
  if (policy.ignore && policy.exclude_unhealthy)
    throw InputError("<arguments>", 0, "expected one of --ignore-health and --exclude-unhealthy, found both");
  HealthDecision d;
  std::vector<std::string> blocking, detailed, warned;
  for (const auto& n : health.nodes) {
    for (auto& line : describe_findings(n)) d.findings.push_back(std::move(line));
    if (!topology::may_calibrate(n)) {
      blocking.push_back(describe_blocking(n));
      detailed.push_back(describe_blocking(n, true));
      d.excluded.push_back(n.node);
    } else if (!n.findings.empty()) {
      warned.push_back(node_name(n));
    }
  }
  const std::string counted =
      std::to_string(health.nodes.size()) + " node(s) checked by " + health.checked_by;
  if (!warned.empty()) d.notes.push_back("health: warnings on " + join(warned, ", ") + " (see check)");
  if (blocking.empty()) {
    d.summary = counted + ": none blocks";
    return d;
  }
  if (!policy.ignore && !policy.exclude_unhealthy)
    throw InputError("<health>", 0,
                     "expected nodes a calibration may run on; found " + std::to_string(blocking.size()) +
                         " blocking: " + join(detailed, " | ") +
                         ". Fix them and run nccl-autotune check again, or calibrate without them "
                         "(--exclude-unhealthy) or regardless (--ignore-health)");
  if (policy.ignore) {
    d.excluded.clear();
    d.summary = counted + ": " + std::to_string(blocking.size()) + " blocking, ignored (--ignore-health)";
    d.notes.push_back("health ignored (--ignore-health): " + join(blocking, " | "));
    return d;
  }
  if (d.excluded.size() == health.nodes.size())
    throw InputError("<health>", 0,
                     "expected at least one node to calibrate without the blocking ones; found every node "
                     "blocking: " +
                         join(blocking, " | "));
  d.excluded_text = blocking;
  d.summary = counted + ": " + std::to_string(blocking.size()) + " blocking, excluded (--exclude-unhealthy)";
  d.notes.push_back("calibrated without " + std::to_string(blocking.size()) +
                    " blocking node(s) (--exclude-unhealthy): " + join(blocking, " | "));
  return d;
}

}  // namespace autotune::check
