#include "check/node_records.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "topology/analysis.hpp"
#include "topology/output.hpp"
#include "topology/reader.hpp"

namespace autotune::check {
namespace {

// This node's record as text: the probe's JSON with the host beside it.
std::string record_text(const NodeRecord& r) {
  const auto analysis = topology::analyze(r.topology);
  nlohmann::json j = nlohmann::json::parse(topology::to_json({r.topology, analysis, ""}));
  j["host"] = r.host;
  return j.dump();
}

// A probe that fails on one node must not leave the others waiting: its failure travels as the record.
std::string probe_text(const std::function<NodeRecord()>& probe_this_node) {
  try {
    return record_text(probe_this_node());
  } catch (const std::exception& e) {
    return nlohmann::json{{"probe_error", e.what()}}.dump();
  }
}

NodeRecord read_record(const std::string& text, int node) {
  const std::string name = "<probe record of node " + std::to_string(node) + ">";
  const auto failed = nlohmann::json::parse(text, nullptr, false);
  if (failed.is_object() && failed.contains("probe_error"))
    throw std::runtime_error("node " + std::to_string(node) +
                             ": its probe failed: " + failed["probe_error"].dump());
  NodeRecord r;
  r.topology = topology::read_topology_text(text, name);
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("host") && j["host"].is_string()) r.host = j["host"].get<std::string>();
  return r;
}

}  // namespace

std::vector<NodeRecord> gather_node_records(const runners::ProcessGroup& processes,
                                            const std::function<NodeRecord()>& probe_this_node) {
  const int local = processes.local_size();
  // Placed node by node, the same number of ranks on every node: every process checks its own rank.
  int placed = processes.rank() % local == processes.local_rank() && processes.size() % local == 0 ? 1 : 0;
  int same[2] = {local, -local};
  processes.allreduce_min(std::span<int>(&placed, 1));
  processes.allreduce_min(std::span<int>(same, 2));
  if (!placed || same[0] != -same[1])
    throw std::runtime_error(
        "check needs the same number of ranks on every node, placed node by node (srun -m block, mpirun "
        "--map-by node:PE=... is not); this job's are not");
  const int nodes = processes.size() / local;
  const bool leader = processes.local_rank() == 0;
  const std::string mine = leader ? probe_text(probe_this_node) : std::string();
  std::vector<std::string> texts;
  for (int n = 0; n < nodes; ++n) texts.push_back(runners::broadcast_text(processes, mine, n * local));
  std::vector<NodeRecord> out;
  for (int n = 0; n < nodes; ++n) out.push_back(read_record(texts[static_cast<size_t>(n)], n));
  return out;
}

}  // namespace autotune::check
