#include "calibrate/p2p_candidates.hpp"

#include "common/input_error.hpp"
#include "common/text.hpp"
#include "nccl/env_policy.hpp"

namespace autotune::calibrate {
namespace {

[[noreturn]] void refuse_p2p_env(const std::string& what) {
  throw InputError("<arguments>", 0, "--p2p-env: " + what);
}

EnvSet parse_env_set(std::string_view item) {
  EnvSet out;
  for (const auto& entry : split(item, '+')) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      refuse_p2p_env("expected NAME=VALUE entries joined by '+', found \"" + printable(entry) + "\"");
    const std::string name(entry.substr(0, eq)), value(entry.substr(eq + 1));
    if (!nccl::is_point_to_point_env_key(name))
      refuse_p2p_env(
          "expected point-to-point settings (NCCL_P2P_NET_CHUNKSIZE, NCCL_NCHANNELS_PER_NET_PEER, "
          "NCCL_PXN_DISABLE, ...), found \"" +
          printable(name) + "\"");
    try {
      nccl::check_env_entry(name, value);
    } catch (const InputError& e) {
      refuse_p2p_env(e.message());
    }
    if (!out.emplace(name, value).second) refuse_p2p_env(name + " is given twice in one setting");
  }
  if (auto problem = nccl::env_set_problem(out)) refuse_p2p_env(problem->message);
  return out;
}

}  // namespace

std::vector<EnvSet> parse_p2p_env(std::string_view text) {
  if (trim(text) == "none") return {};
  std::vector<EnvSet> out;
  for (const auto& item : split(text, ',')) {
    EnvSet set = parse_env_set(trim(item));
    for (const auto& seen : out)
      if (seen == set) refuse_p2p_env("the setting \"" + printable(item) + "\" is given twice");
    out.push_back(std::move(set));
  }
  if (out.empty()) refuse_p2p_env("expected settings or none, found nothing");
  return out;
}

std::vector<EnvSet> default_p2p_candidates() {
  return {{{"NCCL_P2P_NET_CHUNKSIZE", "524288"}},
          {{"NCCL_NCHANNELS_PER_NET_PEER", "4"}},
          {{"NCCL_PXN_DISABLE", "1"}}};
}

bool asks_point_to_point(const std::vector<ShapeRequest>& shapes,
                         const std::optional<ParallelLayout>& layout) {
  for (const auto& s : shapes)
    if (s.shape.nodes > 1)
      for (auto op : s.operations)
        if (nccl::is_point_to_point(op)) return true;
  return shapes.empty() && layout && (layout->ep > 1 || layout->pp > 1 || layout->cp > 1);
}

std::vector<runners::ProcessSetting> p2p_settings(const std::vector<EnvSet>& sets) {
  std::vector<runners::ProcessSetting> out;
  for (const auto& env : sets) {
    std::string id;
    for (const auto& [name, value] : env) id += (id.empty() ? "p2p:" : "+") + name + "=" + value;
    out.push_back({id, env});
  }
  return out;
}

}  // namespace autotune::calibrate
