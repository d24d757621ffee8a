#include "check/check_json.hpp"

#include <nlohmann/json.hpp>

#include "common/input_error.hpp"
#include "topology/output.hpp"

namespace autotune::check {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json optional_numbers(const std::vector<std::optional<double>>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back(optional_number(v));
  return out;
}

json node_json(const NodeReport& n) {
  json j;
  j["node"] = n.health.node;
  j["host"] = n.health.host;
  j["status"] = std::string(topology::node_status(n.health.findings));
  j["findings"] = json::array();
  for (const auto& f : n.health.findings) j["findings"].push_back(topology::finding_json(f));
  j["allreduce_busbw_gbps"] = optional_number(n.baselines.allreduce_gbps);
  j["gpu_pair_busbw_gbps"] = optional_numbers(n.baselines.gpu_gbps);
  j["rail_busbw_gbps"] = optional_numbers(n.baselines.rail_gbps);
  j["ring_busbw_gbps"] = optional_numbers(n.baselines.ring_gbps);
  j["hardware"] = {{"intra_gbps", n.hardware.intra_gbps},
                   {"rail_gbps", n.hardware.rail_gbps},
                   {"rail_nics", n.hardware.rail_nics}};
  j["fabric_env"] = n.fabric_env;
  return j;
}

[[noreturn]] void not_check_json(const std::string& file, const std::string& what) {
  throw InputError(file, 0, "expected nccl-autotune check's JSON (check --format json); " + what);
}

topology::HealthFinding read_finding(const json& f, const std::string& file) {
  if (!f.is_object()) not_check_json(file, "found a finding that is not an object");
  topology::HealthFinding out;
  auto text = [&](const char* key) {
    return f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : std::string();
  };
  out.kind = text("kind");
  const std::string severity = text("severity");
  if (severity != "block" && severity != "warn")
    not_check_json(file, "found a finding whose severity is not block or warn: \"" + severity + "\"");
  out.severity = severity == "block" ? topology::Severity::block : topology::Severity::warn;
  out.device = text("device");
  out.reading = text("reading");
  out.source = text("source");
  out.message = text("message");
  return out;
}

}  // namespace

std::string to_json(const CheckReport& r) {
  json j;
  j["schema"] = 1;
  j["source"] = r.source;
  j["runner"] = r.runner;
  j["status"] = std::string(r.status());
  j["gpus_per_node"] = r.gpus_per_node;
  j["bytes"] = r.bytes;
  j["measured"] = r.measured;
  if (!r.journal.empty()) j["journal"] = {{"file", r.journal}, {"groups", r.journal_groups}};
  j["passes"] = json::array();
  for (const auto& p : r.passes) {
    json e = {{"kind", std::string(pass_kind_name(p.pass.kind))},
              {"shape", runners::shape_text(p.pass.shape)},
              {"node_offset", p.pass.node_offset},
              {"local_offset", p.pass.local_offset},
              {"group_busbw_gbps", p.group_busbw_gbps}};
    if (!p.error.empty()) e["error"] = p.error;
    j["passes"].push_back(e);
  }
  j["medians"] = {{"allreduce_busbw_gbps", r.baselines.allreduce_median},
                  {"gpu_pair_busbw_gbps", r.baselines.gpu_median},
                  {"rail_busbw_gbps", r.baselines.rail_median},
                  {"ring_busbw_gbps", r.baselines.ring_median}};
  j["alltoall_busbw_gbps"] = optional_number(r.baselines.alltoall_gbps);
  j["fabric_env"] = r.fabric_env;
  j["nodes"] = json::array();
  for (const auto& n : r.nodes) j["nodes"].push_back(node_json(n));
  return j.dump(2) + "\n";
}

check::ClusterHealth read_check_json(std::string_view text, const std::string& file) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) not_check_json(file, "found text that is not a JSON object");
  if (!j.contains("nodes") || !j["nodes"].is_array()) not_check_json(file, "found no \"nodes\" list");
  check::ClusterHealth h;
  const std::string source =
      j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : "";
  h.checked_by = "check (" + source + ")";
  for (const auto& n : j["nodes"]) {
    if (!n.is_object() || !n.contains("node") || !n["node"].is_number_integer())
      not_check_json(file, "found a node entry without its \"node\" index");
    topology::NodeHealth node;
    node.node = n["node"].get<int>();
    if (n.contains("host") && n["host"].is_string()) node.host = n["host"].get<std::string>();
    if (n.contains("findings") && n["findings"].is_array())
      for (const auto& f : n["findings"]) node.findings.push_back(read_finding(f, file));
    h.nodes.push_back(std::move(node));
  }
  if (j.contains("fabric_env") && j["fabric_env"].is_object())
    for (const auto& [k, v] : j["fabric_env"].items())
      if (v.is_string()) h.fabric_env[k] = v.get<std::string>();
  return h;
}

}  // namespace autotune::check
