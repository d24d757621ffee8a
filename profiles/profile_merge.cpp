#include "profiles/profile_merge.hpp"

#include <algorithm>

#include "common/input_error.hpp"
#include "nccl/version.hpp"
#include "profiles/profile_toml.hpp"

namespace autotune::profiles {
namespace {

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

// The first thing two profiles must share but do not ("another source (measured and simulated)"); empty when
// none.
std::string first_difference(const Profile& a, const Profile& b) {
  if (!a.cluster.fingerprint.empty() && !b.cluster.fingerprint.empty() &&
      a.cluster.fingerprint != b.cluster.fingerprint)
    return "another kind of node (fingerprint " + a.cluster.fingerprint + " and " + b.cluster.fingerprint +
           ")";
  const auto va = nccl::Version::parse(a.provenance.nccl_version);
  const auto vb = nccl::Version::parse(b.provenance.nccl_version);
  if (!va || !vb || !va->same_major_minor(*vb))
    return "another NCCL major.minor (" + a.provenance.nccl_version + " and " + b.provenance.nccl_version +
           ")";
  if (a.provenance.source != b.provenance.source)
    return "another source (" + std::string(name(a.provenance.source)) + " and " +
           std::string(name(b.provenance.source)) + ")";
  for (const auto& [key, value] : a.env) {
    auto it = b.env.find(key);
    if (it == b.env.end() || it->second != value)
      return "another [env] " + key + " (" + quoted(value) + " and " +
             (it == b.env.end() ? "unset" : quoted(it->second)) +
             "): each side's rules were measured under its own";
  }
  for (const auto& [key, value] : b.env)
    if (!a.env.count(key))
      return "another [env] " + key + " (unset and " + quoted(value) +
             "): each side's rules were measured under its own";
  if (a.constants.size() != b.constants.size()) return "other [constants] overrides";
  for (size_t i = 0; i < a.constants.size(); ++i)
    if (a.constants[i].table != b.constants[i].table || a.constants[i].index != b.constants[i].index ||
        a.constants[i].value != b.constants[i].value)
      return "other [constants] overrides";
  return "";
}

std::string rule_at(const std::string& side, size_t index, const Rule& r) {
  return side + " rule[" + std::to_string(index + 1) + "]" +
         (r.source_line ? " at line " + std::to_string(r.source_line) : "") + " (" +
         std::string(nccl::name(r.collective)) + " " + describe_rule(r) + ": " +
         std::string(nccl::name(r.algorithm)) + "/" + std::string(nccl::name(r.protocol)) +
         (r.channels ? ", " + std::to_string(r.channels) + " channels" : "") + ")";
}

}  // namespace

bool same_decision(const Rule& a, const Rule& b) {
  return a.collective == b.collective && a.min_bytes == b.min_bytes && a.max_bytes == b.max_bytes &&
         a.algorithm == b.algorithm && a.protocol == b.protocol && a.channels == b.channels &&
         a.nodes == b.nodes && a.ranks == b.ranks && a.ranks_per_node == b.ranks_per_node &&
         a.pipe_ops == b.pipe_ops && a.reg_buff == b.reg_buff && a.chunk_bytes == b.chunk_bytes;
}

Profile merge_profiles(const MergeSide& first, const MergeSide& second) {
  const Profile& a = first.profile;
  const Profile& b = second.profile;
  if (std::string d = first_difference(a, b); !d.empty())
    throw InputError(
        second.name, 0,
        "expected a profile of the same calibration conditions as " + first.name + "; found " + d);
  Profile out = a;
  out.cluster.nodes = std::max(a.cluster.nodes, b.cluster.nodes);
  out.layout = join_layouts(a.layout, b.layout);
  for (size_t j = 0; j < b.rules.size(); ++j) {
    const Rule& r = b.rules[j];
    bool duplicate = false;
    for (size_t i = 0; i < a.rules.size() && !duplicate; ++i) {
      if (same_decision(a.rules[i], r)) {
        duplicate = true;
      } else if (rules_overlap(a.rules[i], r)) {
        throw InputError(second.name, r.source_line,
                         "expected rules that do not overlap those of " + first.name + "; found " +
                             rule_at(second.name, j, r) + " overlapping " +
                             rule_at(first.name, i, a.rules[i]));
      }
    }
    if (!duplicate) out.rules.push_back(r);
  }
  return out;
}

}  // namespace autotune::profiles
