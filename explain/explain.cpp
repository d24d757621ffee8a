#include "explain/explain.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "nccl/version.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_model.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/reader.hpp"

namespace autotune::explain {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Sets variables for the plugin to read, and puts back what was there.
class ScopedVariables {
 public:
  void set(const std::string& name, const std::string& value, bool override_existing) {
    const char* old = std::getenv(name.c_str());
    if (old && !override_existing) return;
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedVariables() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second)
        setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void check_options(const ExplainOptions& o) {
  if (o.nodes < 1)
    throw InputError("<arguments>", 0, "--nodes: expected a count >= 1; found " + std::to_string(o.nodes));
  if (o.ranks < 2)
    throw InputError(
        "<arguments>", 0,
        "--ranks: expected a count >= 2 (NCCL does not consult a tuner for a 1-rank communicator); "
        "found " +
            std::to_string(o.ranks));
  if (o.ranks % o.nodes != 0)
    throw InputError("<arguments>", 0,
                     "--ranks: expected a multiple of --nodes (" + std::to_string(o.nodes) +
                         "), the same ranks on every node; found " + std::to_string(o.ranks));
  if (o.example && o.topology_file)
    throw InputError("<arguments>", 0, "--example or --topology: expected one of them; found both");
  if (o.abi && (*o.abi < 2 || *o.abi > 7))
    throw InputError("<arguments>", 0,
                     "--abi: expected a tuner struct version 2..7; found " + std::to_string(*o.abi));
  if (o.pipe_ops < 1)
    throw InputError("<arguments>", 0,
                     "--pipe-ops: expected a count >= 1; found " + std::to_string(o.pipe_ops));
  if (o.reg_buff != 0 && o.reg_buff != 1)
    throw InputError("<arguments>", 0, "--reg-buff: expected 0 or 1; found " + std::to_string(o.reg_buff));
}

topology::Topology node_topology(const ExplainOptions& o, const profiles::Profile& p, std::string* name) {
  if (o.topology_file) {
    *name = *o.topology_file;
    return topology::read_topology_file(*o.topology_file);
  }
  std::optional<std::string> example = o.example;
  if (!example) example = example_for(p.cluster, p.provenance.nccl_version);
  if (!example) {
    std::string names;
    for (const auto& n : topology::example_names()) names += (names.empty() ? "" : ", ") + n;
    const std::string what = p.cluster.gpu_model.empty()
                                 ? std::string("names no GPU model")
                                 : "names " + std::to_string(p.cluster.gpus_per_node) + " x \"" +
                                       p.cluster.gpu_model + "\" and " +
                                       std::to_string(p.cluster.nics_per_node) + " NICs";
    throw InputError(
        "<arguments>", 0,
        "--example NAME or --topology FILE: expected the node NCCL's cost model should describe; "
        "the profile's [cluster] " +
            what + ", which matches no single bundled node (" + names + ")");
  }
  *name = *example;
  return topology::load_example(*example);
}

std::vector<uint64_t> rule_edges(const profiles::Profile& p, nccl::Collective c) {
  std::vector<uint64_t> out;
  for (const auto& r : p.rules) {
    if (r.collective != c) continue;
    out.push_back(r.min_bytes);
    if (r.max_bytes != UINT64_MAX) out.push_back(r.max_bytes + 1);
  }
  return out;
}

}  // namespace

std::optional<std::string> example_for(const profiles::ClusterInfo& cluster,
                                       const std::string& nccl_version) {
  // A simulated calibration of a bundled node carries that node's fingerprint.
  if (auto v = nccl::Version::parse(nccl_version); v && !cluster.fingerprint.empty())
    for (const std::string& name : topology::example_names())
      if (topology::fingerprint(topology::load_example(name), v->major_minor()) == cluster.fingerprint)
        return name;
  if (cluster.gpu_model.empty()) return std::nullopt;
  std::optional<std::string> found;
  for (const std::string& name : topology::example_names()) {
    const sim::SimCluster node = sim::describe_cluster(topology::load_example(name), 1);
    // "H100 80GB HBM3" names the same GPU as the driver's "NVIDIA H100 80GB HBM3".
    const std::string a = lower(node.gpu_model), b = lower(cluster.gpu_model);
    const bool same =
        (a.find(b) != std::string::npos || b.find(a) != std::string::npos) &&
        (cluster.gpus_per_node == 0 || node.gpus_per_node == cluster.gpus_per_node) &&
        (cluster.nics_per_node == 0 || static_cast<int>(node.nics.size()) == cluster.nics_per_node);
    if (!same) continue;
    if (found) return std::nullopt;  // ambiguous
    found = name;
  }
  return found;
}

Explanation explain(const ExplainOptions& options) {
  check_options(options);
  Explanation e;
  e.options = options;
  if (e.options.collectives.empty())
    e.options.collectives.assign(nccl::kAllCollectives.begin(), nccl::kAllCollectives.end());
  // Strictly, as `profile validate` would: a bad TOML profile stops here with its file and line.
  profiles::ProfileRead read = profiles::read_any_profile(
      options.profile_path, read_file(options.profile_path, profiles::kProfileInput), /*use_compiled=*/false);
  e.profile_format = read.format;
  e.source = read.profile.provenance.source;
  e.nccl_version = read.profile.provenance.nccl_version;
  e.skipped = read.skipped;
  if (const auto& layout = read.profile.layout) {
    e.layout = layout->parallelism;
    e.serves = profiles::groups_of_shape(*layout, options.nodes, options.ranks);
  }

  const topology::Topology topo = node_topology(options, read.profile, &e.node.name);
  const sim::SimCluster whole = sim::describe_cluster(topo, options.nodes);
  e.node.gpu_model = whole.gpu_model;
  e.node.gpus_per_node = whole.gpus_per_node;
  e.node.nics = static_cast<int>(whole.nics.size());
  // NCCL's choices for the communicator's own shape (one rank per node has no NVLS, for one), alone.
  const sim::SimModel model(sim::shape_cluster(whole, options.ranks / options.nodes, false), read.profile.env,
                            sim::SimDeviations{.enabled = false});
  e.node.nvls = model.cluster().nvls;
  e.node.collnet = model.cluster().collnet;

  MapRequest request;
  request.open.plugin = options.plugin_path;
  request.open.nccl_version_code = 23206;
  request.open.only_version = options.abi;
  request.nodes = options.nodes;
  request.ranks = options.ranks;
  request.pipe_ops = options.pipe_ops;
  request.reg_buff = options.reg_buff;
  request.max_bytes = options.max_bytes;
  request.collectives = e.options.collectives;
  request.edges = [&](nccl::Collective c) { return rule_edges(read.profile, c); };

  // What `nccl-autotune run` gives the job: the profile, and its [env] where the user set nothing.
  ScopedVariables vars;
  vars.set("NCCL_AUTOTUNE_PROFILE", options.profile_path, true);
  for (const auto& [k, v] : read.profile.env) vars.set(k, v, false);
  std::string why;
  auto map = map_decisions(
      request, [&](nccl::Collective c, uint64_t bytes) { return model.cost_table(c, bytes); }, &why);
  if (!map) throw std::runtime_error("NCCL would run without a tuner plugin: " + why);
  e.map = std::move(*map);
  return e;
}

}  // namespace autotune::explain
