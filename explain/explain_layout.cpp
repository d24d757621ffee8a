#include "explain/explain_layout.hpp"

#include <algorithm>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "nccl/env_policy.hpp"
#include "topology/examples.hpp"
#include "topology/reader.hpp"

namespace autotune::explain {

int layout_gpus_per_node(const ExplainOptions& o) {
  const profiles::ProfileRead read = profiles::read_any_profile(
      o.profile_path, read_file(o.profile_path, profiles::kProfileInput), /*use_compiled=*/false);
  if (read.profile.cluster.gpus_per_node > 0) return read.profile.cluster.gpus_per_node;
  if (o.topology_file) return static_cast<int>(topology::read_topology_file(*o.topology_file).gpus.size());
  std::optional<std::string> example = o.example;
  if (!example) example = example_for(read.profile.cluster, read.profile.provenance.nccl_version);
  if (!example)
    throw InputError("<arguments>", 0,
                     "--gpus-per-node: expected the GPUs of a node, for the layout; the profile's [cluster] "
                     "names none and no --example or --topology was given");
  return static_cast<int>(topology::load_example(*example).gpus.size());
}

LayoutExplanation explain_layout(const ExplainOptions& base, const profiles::JobLayout& layout, int nodes,
                                 int gpus_per_node) {
  LayoutExplanation out{layout.parallelism, nodes, gpus_per_node, {}, {}, {}};
  const profiles::Profile profile =
      profiles::read_any_profile(base.profile_path, read_file(base.profile_path, profiles::kProfileInput),
                                 /*use_compiled=*/false)
          .profile;
  for (const auto& [key, value] : profile.env)
    if (nccl::is_point_to_point_env_key(key)) out.p2p_env[key] = value;
  if (profile.layout && !profile.layout->p2p_env.empty()) out.p2p_env_layout = profile.layout->parallelism;
  for (const auto& g : layout.groups) {
    KindExplanation k{g, {}, std::nullopt};
    std::vector<nccl::Collective> collectives;
    for (auto op : g.operations) {
      const auto c = nccl::as_collective(op);
      if (!c)
        k.point_to_point.push_back(op);
      else if (base.collectives.empty() ||
               std::find(base.collectives.begin(), base.collectives.end(), *c) != base.collectives.end())
        collectives.push_back(*c);
    }
    if (!collectives.empty()) {
      ExplainOptions o = base;
      o.nodes = g.nodes;
      o.ranks = g.ranks;
      o.collectives = collectives;
      k.collectives = explain(o);
    }
    out.kinds.push_back(std::move(k));
  }
  return out;
}

}  // namespace autotune::explain
