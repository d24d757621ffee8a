#pragma once
// `nccl-autotune explain --parallelism tp=8,pp=4,dp=4 --nodes 16`: every kind of communicator a job of that
// layout creates, at once. Each kind's collectives are explained as one communicator of its shape is
// (explain.hpp); its point-to-point operations (pipeline send/recv, expert all-to-all) are named with what
// steers them, since NCCL asks no tuner for them and no per-call rule can exist. The layout's groups come in
// from calibrate/shapes.hpp through the CLI. Not thread-safe (explain.hpp).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "explain/explain.hpp"
#include "profiles/job_layout.hpp"

namespace autotune::explain {

struct KindExplanation {
  profiles::LayoutGroup group;
  std::vector<nccl::Operation> point_to_point;  // no rule exists for these
  std::optional<Explanation> collectives;       // absent when the kind runs none (or none asked for)
};

struct LayoutExplanation {
  std::string parallelism;
  int nodes = 0;
  int gpus_per_node = 0;
  std::vector<KindExplanation> kinds;
  // What steers the point-to-point operations: the profile's [env] entries that are point-to-point settings,
  // and the layout that calibrated them (empty when the profile says none).
  std::map<std::string, std::string> p2p_env;
  std::string p2p_env_layout;
};

// The GPUs per node a layout is laid over: the profile's [cluster] gpus_per_node, else the modelled node's.
// Throws what explain() throws for a bad profile or no node to model.
int layout_gpus_per_node(const ExplainOptions& options);

// Each kind of `layout` explained; `base` gives the profile, plugin, node and per-call options, and its
// collectives (empty: all) narrow every kind's own.
LayoutExplanation explain_layout(const ExplainOptions& base, const profiles::JobLayout& layout, int nodes,
                                 int gpus_per_node);

}  // namespace autotune::explain
