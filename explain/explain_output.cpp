#include "explain/explain_output.hpp"

#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/byte_size.hpp"

namespace autotune::explain {
namespace {

std::string choice_text(const Decision& d) {
  if (d.none) return "none usable";
  return std::string(nccl::name(d.algorithm)) + "/" + std::string(nccl::name(d.protocol));
}

std::string who(const Decision& d) {
  return d.by_plugin ? "profile" : "NCCL (modelled)";
}

// Which groups of the layout the profile was calibrated for have this shape, and what no rule steers.
std::string serves_text(const Explanation& e) {
  if (e.layout.empty()) return "";
  std::string kinds;
  for (const auto& g : e.serves) kinds += (kinds.empty() ? "" : "; ") + profiles::describe_group(g);
  std::string out = "serves: " + (kinds.empty() ? "no group" : kinds) + " of the layout " + e.layout +
                    " the profile was calibrated for\n";
  for (const auto& g : e.serves)
    for (auto op : g.operations)
      if (nccl::is_point_to_point(op))
        out += "  " + profiles::no_rule_note(op) + " [" +
               std::string(profiles::kind_title(g.kind).value_or(g.kind)) + "]\n";
  return out;
}

nlohmann::json group_json(const profiles::LayoutGroup& g) {
  std::vector<std::string> ops;
  for (auto op : g.operations) ops.emplace_back(nccl::name(op));
  return {{"kind", g.kind},     {"title", profiles::kind_title(g.kind).value_or(g.kind)},
          {"nodes", g.nodes},   {"ranks", g.ranks},
          {"groups", g.groups}, {"operations", ops}};
}

std::string header(const Explanation& e) {
  const auto& o = e.options;
  std::string out = "profile " + o.profile_path + " (" + e.profile_format + ", source " +
                    std::string(profiles::name(e.source)) +
                    (e.nccl_version.empty() ? "" : ", for NCCL " + e.nccl_version) + ")\n";
  out += "communicator: " + std::to_string(o.ranks) + " ranks on " + std::to_string(o.nodes) + " nodes (" +
         std::to_string(o.ranks / o.nodes) + " per node), numPipeOps " + std::to_string(o.pipe_ops) +
         ", regBuff " + std::to_string(o.reg_buff) + "\n";
  out += "plugin: " + e.map.plugin_name + " (tuner ABI v" + std::to_string(e.map.abi_version) + ") from " +
         e.map.library + ", called as NCCL calls it (" + std::to_string(e.map.calls) + " calls)\n";
  out += "NCCL's own choices are modelled, not measured: the simulator's model of NCCL's cost model for " +
         e.node.name + " (" + std::to_string(e.node.gpus_per_node) + " x " + e.node.gpu_model + ", " +
         std::to_string(e.node.nics) + " NICs" + (e.node.nvls ? ", NVLS" : "") +
         (e.node.collnet ? ", CollNet" : "") + ")\n";
  out += serves_text(e);
  for (const auto& s : e.skipped)
    out += "skipped: " + o.profile_path + ":" + std::to_string(s.line) + ": " + s.message + "\n";
  for (const auto& line : e.map.plugin_log) out += "plugin says: " + line + "\n";
  return out;
}

std::string range_line(const Range& r) {
  char bytes[64];
  std::snprintf(bytes, sizeof bytes, "%15" PRIu64 " - %-15" PRIu64, r.first, r.last);
  const std::string human = "(" + human_byte_size(r.first) + " - " + human_byte_size(r.last) + ")";
  const Decision& d = r.decision;
  std::string extra;
  if (d.channels > 0) extra += "  channels " + std::to_string(d.channels);
  if (d.chunk > 0) extra += "  chunk " + format_byte_size(d.chunk);
  char line[256];
  std::snprintf(line, sizeof line, "  %s %-24s %-16s %-12s%s", bytes, human.c_str(), who(d).c_str(),
                choice_text(d).c_str(), extra.c_str());
  std::string out = line;
  out.erase(out.find_last_not_of(' ') + 1);
  return out + "\n";
}

}  // namespace

std::string format_text(const Explanation& e) {
  std::string out = header(e);
  for (const CollectiveMap& m : e.map.collectives) {
    out += "\n" + std::string(nccl::name(m.collective)) + ":\n";
    for (const Range& r : m.ranges) out += range_line(r);
  }
  return out;
}

namespace {

nlohmann::json to_json(const Explanation& e) {
  using nlohmann::json;
  json j;
  const auto& o = e.options;
  j["profile"] = {{"path", o.profile_path},
                  {"format", e.profile_format},
                  {"source", profiles::name(e.source)},
                  {"nccl_version", e.nccl_version}};
  j["communicator"] = {
      {"nodes", o.nodes}, {"ranks", o.ranks}, {"pipe_ops", o.pipe_ops}, {"reg_buff", o.reg_buff}};
  j["plugin"] = {{"library", e.map.library},
                 {"name", e.map.plugin_name},
                 {"abi_version", e.map.abi_version},
                 {"calls", e.map.calls},
                 {"log", e.map.plugin_log}};
  j["nccl_model"] = {{"source", "modelled"},          {"node", e.node.name},
                     {"gpu_model", e.node.gpu_model}, {"gpus_per_node", e.node.gpus_per_node},
                     {"nics", e.node.nics},           {"nvls", e.node.nvls},
                     {"collnet", e.node.collnet}};
  j["skipped"] = json::array();
  for (const auto& s : e.skipped) j["skipped"].push_back({{"line", s.line}, {"message", s.message}});
  j["collectives"] = json::array();
  for (const CollectiveMap& m : e.map.collectives) {
    json ranges = json::array();
    for (const Range& r : m.ranges) {
      const Decision& d = r.decision;
      json jr = {
          {"first", r.first}, {"last", r.last}, {"decided_by", d.by_plugin ? "profile" : "nccl-modelled"}};
      if (d.none) {
        jr["algorithm"] = nullptr;
        jr["protocol"] = nullptr;
      } else {
        jr["algorithm"] = nccl::name(d.algorithm);
        jr["protocol"] = nccl::name(d.protocol);
      }
      jr["channels"] = d.channels > 0 ? json(d.channels) : json(nullptr);
      jr["chunk_bytes"] = d.chunk > 0 ? json(d.chunk) : json(nullptr);
      ranges.push_back(jr);
    }
    j["collectives"].push_back({{"collective", nccl::name(m.collective)}, {"ranges", ranges}});
  }
  if (!e.layout.empty()) {
    j["layout"] = e.layout;
    j["serves"] = json::array();
    for (const auto& g : e.serves) j["serves"].push_back(group_json(g));
  }
  return j;
}

}  // namespace

std::string format_json(const Explanation& e) {
  return to_json(e).dump(2) + "\n";
}

namespace {

// The process-wide settings that steer a kind's point-to-point operations, as the launcher exports them.
std::string p2p_env_text(const LayoutExplanation& e) {
  if (e.p2p_env.empty())
    return "process-wide: NCCL's defaults (the profile's [env] holds no point-to-point setting)\n";
  std::string settings;
  for (const auto& [key, value] : e.p2p_env) settings += (settings.empty() ? "" : " ") + key + "=" + value;
  return "process-wide: " + settings + " (the profile's [env]" +
         (e.p2p_env_layout.empty() ? "" : ", chosen for the point-to-point traffic of " + e.p2p_env_layout) +
         ")\n";
}

}  // namespace

std::string format_layout_text(const LayoutExplanation& e) {
  std::string out = "layout " + e.parallelism + " on " + std::to_string(e.nodes) + " nodes x " +
                    std::to_string(e.gpus_per_node) + " GPUs: " + std::to_string(e.kinds.size()) +
                    " kinds of communicator\n";
  for (const auto& k : e.kinds) {
    const auto& g = k.group;
    out += "\n== " + profiles::describe_group(g) + " of " + std::to_string(g.nodes) + "x" +
           std::to_string(g.ranks / g.nodes) + " (" + std::to_string(g.ranks) +
           " ranks): " + profiles::operations_text(g.operations) + "\n";
    for (auto op : k.point_to_point) out += profiles::no_rule_note(op) + "\n";
    if (!k.point_to_point.empty()) out += p2p_env_text(e);
    if (k.collectives) out += format_text(*k.collectives);
  }
  return out;
}

std::string format_layout_json(const LayoutExplanation& e) {
  using nlohmann::json;
  json kinds = json::array();
  for (const auto& k : e.kinds) {
    json j = group_json(k.group);
    j["no_rule"] = json::array();
    for (auto op : k.point_to_point) j["no_rule"].push_back(nccl::name(op));
    j["explanation"] = k.collectives ? to_json(*k.collectives) : json(nullptr);
    kinds.push_back(j);
  }
  json j = {{"parallelism", e.parallelism},       {"p2p_env", e.p2p_env},
            {"p2p_env_layout", e.p2p_env_layout}, {"nodes", e.nodes},
            {"gpus_per_node", e.gpus_per_node},   {"kinds", kinds}};
  return j.dump(2) + "\n";
}

}  // namespace autotune::explain
