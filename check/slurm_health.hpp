#pragma once
// `check --slurm-health`: one node's health as Slurm's HealthCheckProgram (or NHC) runs it, acted on through
// scontrol. A blocking finding drains the node with a reason naming it ("nccl-autotune: mlx5_1 port 1: ...");
// a node found healthy again is resumed only when its current reason starts with "nccl-autotune:", so a node
// an administrator drained for anything else is never resumed (and never relabelled). scontrol runs through
// the ProcessLauncher seam, so tests decide drain, resume and leave-alone without Slurm. Not thread-safe.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/process_launcher.hpp"
#include "topology/health.hpp"

namespace autotune::check {

inline constexpr std::string_view kSlurmReasonPrefix = "nccl-autotune:";

// What `scontrol show node NAME` says of the node.
struct SlurmNodeState {
  std::string state;     // "IDLE+DRAIN", "MIXED", ...
  std::string reason;    // without Slurm's " [user@time]" suffix; empty when none
  bool drained() const;  // DRAIN in the state (draining or drained)
};
// Throws std::runtime_error when the text names no State (the node is unknown to Slurm, say).
SlurmNodeState parse_scontrol_node(std::string_view text);

enum class SlurmAction { none, drain, resume };
std::string_view name(SlurmAction a);  // "none", "drain", "resume"

struct SlurmDecision {
  SlurmAction action = SlurmAction::none;
  std::string reason;  // the drain reason, for drain
  std::string why;     // one line for the log: what was found and what was done or left alone
};

// The reason a blocking finding drains a node with: the prefix, the device and the reading ("(+N more)" when
// several block). Empty when nothing blocks.
std::string drain_reason(const std::vector<topology::HealthFinding>& findings);

// Pure: blocking findings drain the node (again when our reason changed) unless someone else drained it;
// a healthy node drained by us is resumed; anything else is left alone.
SlurmDecision decide(const std::vector<topology::HealthFinding>& findings, const SlurmNodeState& node);

struct SlurmHealthResult {
  SlurmNodeState before;
  SlurmDecision decision;
};

// Whether the node is drained by this check after `r`: it just drained it, or it stays drained with our
// reason.
bool drained_by_check(const SlurmHealthResult& r);

// Reads the node's state with scontrol, decides, and drains or resumes it with scontrol. `scratch` holds
// scontrol's output while it runs. Throws std::runtime_error when scontrol fails (naming its output) or
// takes longer than 30 s.
SlurmHealthResult apply_slurm_health(const std::string& node,
                                     const std::vector<topology::HealthFinding>& findings,
                                     ProcessLauncher& launcher, const Clock& clock,
                                     const std::filesystem::path& scratch);

}  // namespace autotune::check
