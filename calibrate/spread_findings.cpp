#include "calibrate/spread_findings.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace autotune::calibrate {
namespace {

// The other slow group, of another shape, that also holds node n: where two groups that share only part of
// their nodes are both slow, the straggler is on what they share (check triangulates a GPU from its two pairs
// the same way); nullptr when none does.
const search::GroupSpread* corroborating(const search::GroupSpread& s, int n,
                                         const std::vector<const search::GroupSpread*>& slow) {
  for (const search::GroupSpread* o : slow)
    if (o->shape != s.shape && std::find(o->nodes.begin(), o->nodes.end(), n) != o->nodes.end()) return o;
  return nullptr;
}

// The GPUs two groups share on a node ("" when either takes every GPU of it and the other too).
std::string shared_gpus_text(const search::GroupSpread& a, const search::GroupSpread& b) {
  if (a.gpus.empty() && b.gpus.empty()) return "";
  std::vector<int> both = a.gpus.empty() ? b.gpus : a.gpus;
  if (!a.gpus.empty() && !b.gpus.empty())
    both.erase(
        std::remove_if(both.begin(), both.end(),
                       [&b](int g) { return std::find(b.gpus.begin(), b.gpus.end(), g) == b.gpus.end(); }),
        both.end());
  if (both.empty()) return "";
  return fmt::format(", GPU{} {}", both.size() == 1 ? "" : "s", fmt::join(both, ","));
}

// Group s's finding on node n. A group on one node names that node. A group across nodes names all of them
// but can blame none: on a node no other slow group holds it only warns (else one slow GPU in a
// data-parallel group would block every node of it); where another shape's slow group also holds the node,
// the straggler is there, and the group's own severity stands.
topology::HealthFinding group_finding(const search::GroupSpread& s, int n,
                                      const std::vector<const search::GroupSpread*>& slow,
                                      const check::Thresholds& thresholds, const std::string& source) {
  const std::string device = fmt::format("{} group {}", runners::shape_text(s.shape), s.group);
  const search::GroupSpread* also = s.nodes.size() == 1 ? nullptr : corroborating(s, n, slow);
  const bool blamed = s.nodes.size() == 1 || also != nullptr;
  const auto severity =
      blamed && s.ratio < thresholds.block ? topology::Severity::block : topology::Severity::warn;
  std::string message = fmt::format(
      "{} ran at {:.0f}% of its shape's median group's bandwidth over the calibration's {} measurements: ",
      device, s.ratio * 100.0, s.measurements);
  if (also != nullptr)
    message += fmt::format(
        "node {} is also in the slow {} group {}: the straggler is on node {}{}; run `nccl-autotune "
        "check` on it to name the device",
        n, runners::shape_text(also->shape), also->group, n, shared_gpus_text(s, *also));
  else
    message += fmt::format(
        "one of its nodes, GPUs or NICs is a straggler; run `nccl-autotune check` on {} to find which",
        s.place());
  return {"calibration_group_slow", severity, device, s.describe(), source, message};
}

}  // namespace

std::vector<std::vector<topology::HealthFinding>> group_findings(std::span<const search::GroupSpread> spreads,
                                                                 int nodes,
                                                                 const check::Thresholds& thresholds,
                                                                 const std::string& source) {
  std::vector<const search::GroupSpread*> slow;
  for (const auto& s : spreads)
    if (s.ratio < thresholds.warn) slow.push_back(&s);
  std::vector<std::vector<topology::HealthFinding>> out(static_cast<size_t>(std::max(0, nodes)));
  for (const search::GroupSpread* s : slow)
    for (int n : s->nodes)
      if (n >= 0 && n < nodes)
        out[static_cast<size_t>(n)].push_back(group_finding(*s, n, slow, thresholds, source));
  return out;
}

std::vector<std::string> slow_groups(std::span<const search::JournalRecord> records,
                                     const search::JournalHeader& header) {
  const check::Thresholds thresholds;
  std::vector<std::string> out;
  for (const auto& s : search::group_spreads(records, {header.nodes, header.gpus_per_node}))
    if (s.ratio < thresholds.warn)
      out.push_back(s.describe() + (s.ratio < thresholds.block ? " (block)" : " (warn)"));
  return out;
}

}  // namespace autotune::calibrate
