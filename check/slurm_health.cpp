#include "check/slurm_health.hpp"

#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/text.hpp"

namespace autotune::check {
namespace {

constexpr double kScontrolLimitS = 30.0;

bool ours(const SlurmNodeState& n) {
  return n.reason.starts_with(kSlurmReasonPrefix);
}

// Runs scontrol with `args` to its end; its output, or a runtime_error saying how it failed.
std::string scontrol(const std::vector<std::string>& args, ProcessLauncher& launcher, const Clock& clock,
                     const std::filesystem::path& scratch) {
  std::vector<std::string> argv = {"scontrol"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::filesystem::create_directories(scratch.parent_path().empty() ? "." : scratch.parent_path());
  std::filesystem::remove(scratch);
  auto child = launcher.start({argv, environment_map(), scratch});
  const Ended end = wait_for_end(*child, clock, kScontrolLimitS);
  std::error_code ec;
  const std::string out = std::filesystem::exists(scratch, ec) ? read_file(scratch) : "";
  std::filesystem::remove(scratch, ec);
  const std::string command = join(argv, " ");
  if (end.stopped) throw std::runtime_error(command + ": no answer in 30 s (slurmctld unreachable?)");
  if (!end.status.ok())
    throw std::runtime_error(command + ": " + end.status.describe() + ": " + std::string(trim(out)));
  return out;
}

}  // namespace

bool SlurmNodeState::drained() const {
  return state.find("DRAIN") != std::string::npos;
}

SlurmNodeState parse_scontrol_node(std::string_view text) {
  SlurmNodeState n;
  bool found = false;
  for (std::string_view line : split(text, '\n')) {
    const std::string t(trim(line));
    if (t.starts_with("Reason=")) {
      std::string r = t.substr(7);
      // Slurm appends who set it and when: "reason [root@2026-12-02T10:00:00]".
      if (const size_t at = r.rfind(" ["); at != std::string::npos && r.ends_with("]")) r.resize(at);
      n.reason = r == "(null)" ? "" : r;
      continue;
    }
    for (size_t at = t.find("State="); at != std::string::npos; at = t.find("State=", at + 1)) {
      if (at > 0 && t[at - 1] != ' ') continue;  // "CurrentState=", "NextState="
      const size_t end = t.find(' ', at);
      n.state = t.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
      found = true;
      break;
    }
  }
  if (!found)
    throw std::runtime_error("scontrol show node: expected a State= field; found: " +
                             std::string(trim(text)));
  return n;
}

std::string_view name(SlurmAction a) {
  switch (a) {
    case SlurmAction::drain:
      return "drain";
    case SlurmAction::resume:
      return "resume";
    case SlurmAction::none:
      break;
  }
  return "none";
}

std::string drain_reason(const std::vector<topology::HealthFinding>& findings) {
  std::string first;
  int more = 0;
  for (const auto& f : findings) {
    if (f.severity != topology::Severity::block) continue;
    if (first.empty())
      first = f.device + (f.reading.empty() ? "" : ": " + f.reading);
    else
      ++more;
  }
  if (first.empty()) return "";
  return std::string(kSlurmReasonPrefix) + " " + first +
         (more ? " (+" + std::to_string(more) + " more)" : "");
}

SlurmDecision decide(const std::vector<topology::HealthFinding>& findings, const SlurmNodeState& node) {
  const std::string reason = drain_reason(findings);
  if (!reason.empty()) {
    if (node.drained() && !ours(node))
      return {SlurmAction::none, "",
              "found " + reason + "; left alone: already drained by someone else (" + node.reason + ")"};
    if (node.drained() && node.reason == reason)
      return {SlurmAction::none, "", "still " + reason + "; stays drained"};
    return {SlurmAction::drain, reason, "drained: " + reason};
  }
  if (node.drained() && ours(node))
    return {SlurmAction::resume, "", "healthy again; resumed (was: " + node.reason + ")"};
  if (node.drained())
    return {SlurmAction::none, "", "healthy; left drained: drained by someone else (" + node.reason + ")"};
  return {SlurmAction::none, "", "healthy"};
}

bool drained_by_check(const SlurmHealthResult& r) {
  return r.decision.action == SlurmAction::drain ||
         (r.decision.action == SlurmAction::none && r.before.drained() && ours(r.before));  // still blocking
}

SlurmHealthResult apply_slurm_health(const std::string& node,
                                     const std::vector<topology::HealthFinding>& findings,
                                     ProcessLauncher& launcher, const Clock& clock,
                                     const std::filesystem::path& scratch) {
  SlurmHealthResult r;
  r.before = parse_scontrol_node(scontrol({"show", "node", node}, launcher, clock, scratch));
  r.decision = decide(findings, r.before);
  if (r.decision.action == SlurmAction::drain)
    scontrol({"update", "NodeName=" + node, "State=DRAIN", "Reason=" + r.decision.reason}, launcher, clock,
             scratch);
  if (r.decision.action == SlurmAction::resume)
    scontrol({"update", "NodeName=" + node, "State=RESUME"}, launcher, clock, scratch);
  return r;
}

}  // namespace autotune::check
