#include "profiles/job_layout.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace autotune::profiles {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kKinds = {{
    {"tp", "tensor parallel"},
    {"cp", "context parallel"},
    {"dp", "data parallel"},
    {"ep", "expert parallel"},
    {"edp", "expert data parallel"},
    {"pp", "pipeline parallel"},
    {"embedding", "pipeline embedding"},
    {"shard", "HSDP shard"},
    {"replicate", "HSDP replicate"},
    {"fsdp", "FSDP"},
}};

}  // namespace

std::optional<std::string_view> kind_title(std::string_view kind) {
  for (const auto& [k, title] : kKinds)
    if (k == kind) return title;
  return std::nullopt;
}

std::string describe_group(const LayoutGroup& g) {
  return std::string(kind_title(g.kind).value_or(g.kind)) + ", " + std::to_string(g.groups) +
         (g.groups == 1 ? " group" : " groups");
}

std::string operations_text(const std::vector<nccl::Operation>& operations) {
  std::string out;
  for (auto op : operations) out += (out.empty() ? "" : "+") + std::string(nccl::name(op));
  return out;
}

std::string no_rule_note(nccl::Operation op) {
  return std::string(nccl::name(op)) +
         ": no per-call rule exists (NCCL asks no tuner for point-to-point operations; process-wide settings "
         "only)";
}

std::vector<LayoutGroup> groups_of_shape(const JobLayout& layout, int nodes, int ranks) {
  std::vector<LayoutGroup> out;
  for (const auto& g : layout.groups)
    if (g.nodes == nodes && g.ranks == ranks) out.push_back(g);
  return out;
}

std::optional<JobLayout> join_layouts(const std::optional<JobLayout>& first,
                                      const std::optional<JobLayout>& second) {
  if (!first || !second || *first == *second) return first ? first : second;
  JobLayout out = *first;
  out.parallelism += " + " + second->parallelism;
  for (const auto& g : second->groups)
    if (std::find(out.groups.begin(), out.groups.end(), g) == out.groups.end()) out.groups.push_back(g);
  for (const auto& name : second->p2p_env)
    if (std::find(out.p2p_env.begin(), out.p2p_env.end(), name) == out.p2p_env.end())
      out.p2p_env.push_back(name);
  return out;
}

std::optional<std::string> layout_problem(const LayoutGroup& g) {
  if (!kind_title(g.kind)) {
    std::string known;
    for (const auto& [k, title] : kKinds) known += (known.empty() ? "" : ", ") + std::string(k);
    return "expected a group kind (" + known + "); found \"" + g.kind + "\"";
  }
  if (g.nodes < 1 || g.ranks < 2 || g.ranks % g.nodes != 0)
    return "expected nodes >= 1 and ranks >= 2, a multiple of nodes; found nodes " + std::to_string(g.nodes) +
           ", ranks " + std::to_string(g.ranks);
  if (g.groups < 1) return "expected groups >= 1; found " + std::to_string(g.groups);
  if (g.operations.empty()) return std::string("expected at least one operation; found none");
  for (size_t i = 0; i < g.operations.size(); ++i)
    if (std::find(g.operations.begin(), g.operations.begin() + static_cast<long>(i), g.operations[i]) !=
        g.operations.begin() + static_cast<long>(i))
      return "expected each operation once; found " + std::string(nccl::name(g.operations[i])) + " twice";
  return std::nullopt;
}

}  // namespace autotune::profiles
