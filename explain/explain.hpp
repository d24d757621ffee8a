#pragma once
// `nccl-autotune explain`: which algorithm, protocol, channels and chunk size a profile gives a communicator
// of N nodes x R ranks at every message size, per collective, as the built plugin decides them when NCCL
// calls it (decision_map.hpp), with NCCL's own choice, from the simulator's model of NCCL's cost model, where
// no rule applies. The node the model describes comes from --example / --topology, or from the bundled
// example whose GPU model, GPU count and NIC count the profile's [cluster] names. Output as text or JSON
// (explain_output.hpp). Not thread-safe (see decision_map.hpp); sets and restores environment variables.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "explain/decision_map.hpp"
#include "profiles/any_profile.hpp"

namespace autotune::explain {

struct ExplainOptions {
  std::string profile_path;  // as the plugin would be given it (NCCL_AUTOTUNE_PROFILE)
  std::string plugin_path;   // the library to open, as NCCL_TUNER_PLUGIN would name it
  int nodes = 1;
  int ranks = 0;
  std::vector<nccl::Collective> collectives;  // empty: all five
  std::optional<std::string> example;         // a bundled node (topology/examples.hpp) for the model
  std::optional<std::string> topology_file;   // or a probed one (hwloc or NCCL topology XML)
  std::optional<int> abi;  // look up this tuner struct version alone; else NCCL 2.32.6's order
  int pipe_ops = 1;
  int reg_buff = 0;
  uint64_t max_bytes = uint64_t(16) << 30;
};

struct NodeModel {
  std::string name;  // "h100-8x" or the topology file
  std::string gpu_model;
  int gpus_per_node = 0;  // of the node; the communicator's ranks per node may be fewer
  int nics = 0;
  bool nvls = false;
  bool collnet = false;
};

struct Explanation {
  ExplainOptions options;
  std::string profile_format;  // "TOML" or "CSV"
  profiles::Source source = profiles::Source::imported;
  std::string nccl_version;  // the profile's provenance, may be empty
  std::vector<profiles::CsvSkipped> skipped;
  NodeModel node;
  DecisionMap map;
  // The layout the profile was calibrated for ([layout]; empty without one) and its groups of this shape.
  std::string layout;
  std::vector<profiles::LayoutGroup> serves;
};

// Throws InputError before any work for a bad profile (file, line, what was expected), options that do not
// describe a communicator NCCL tunes (ranks < 2, ranks not a multiple of nodes), or no way to tell which node
// to model. Throws std::runtime_error when NCCL would run without a tuner (the plugin does not open).
Explanation explain(const ExplainOptions& options);

// The bundled example node for a profile's [cluster]: the one whose fingerprint (for the profile's NCCL
// major.minor) is the profile's, else the only one with its GPU model, GPUs per node and NICs per node (when
// given); nullopt when none or more than one matches.
std::optional<std::string> example_for(const profiles::ClusterInfo& cluster, const std::string& nccl_version);

}  // namespace autotune::explain
