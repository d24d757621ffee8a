#include "profiles/profile_diff.hpp"

#include <map>
#include <tuple>

#include "common/byte_size.hpp"
#include "profiles/profile_toml.hpp"

namespace autotune::profiles {

namespace {

using Key = std::tuple<int, int, int, int, int, int, int, uint64_t, uint64_t, int, int, int>;

Key key_of(const Rule& r) {
  const CountRange none{0, 0};
  CountRange n = r.nodes.value_or(none), k = r.ranks.value_or(none), q = r.pipe_ops.value_or(none),
             l = r.ranks_per_node.value_or(none);
  const int reg = r.reg_buff ? (*r.reg_buff ? 2 : 1) : 0;
  return {static_cast<int>(r.collective),
          n.min,
          n.max,
          k.min,
          k.max,
          l.min,
          l.max,
          r.min_bytes,
          r.max_bytes,
          q.min,
          q.max,
          reg};
}

bool same_choice(const Rule& a, const Rule& b) {
  return a.algorithm == b.algorithm && a.protocol == b.protocol && a.channels == b.channels &&
         a.chunk_bytes == b.chunk_bytes;
}

}  // namespace

std::string describe_rule_choice(const Rule& r) {
  std::string out = std::string(name(r.collective)) + " " + format_byte_size(r.min_bytes) + ".." +
                    format_byte_size(r.max_bytes) + " nodes " + format_count_range(r.nodes) + " ranks " +
                    format_count_range(r.ranks);
  if (r.ranks_per_node) out += " ranks_per_node " + format_count_range(r.ranks_per_node);
  if (r.pipe_ops) out += " pipe_ops " + format_count_range(r.pipe_ops);
  if (r.reg_buff) out += std::string(" reg_buff ") + (*r.reg_buff ? "true" : "false");
  out += ": " + std::string(name(r.algorithm)) + "/" + std::string(name(r.protocol)) + " channels " +
         (r.channels == 0 ? std::string("auto") : std::to_string(r.channels));
  if (r.chunk_bytes) out += " chunk " + format_byte_size(r.chunk_bytes);
  return out;
}

ProfileDiff diff_profiles(const Profile& a, const Profile& b) {
  ProfileDiff d;
  std::map<Key, const Rule*> left, right;
  for (const auto& r : a.rules) left[key_of(r)] = &r;
  for (const auto& r : b.rules) right[key_of(r)] = &r;
  for (const auto& [k, r] : left) {
    auto it = right.find(k);
    if (it == right.end())
      d.removed.push_back(*r);
    else if (!same_choice(*r, *it->second))
      d.changed.push_back({*r, *it->second});
  }
  for (const auto& [k, r] : right)
    if (!left.count(k)) d.added.push_back(*r);
  for (const auto& [k, v] : a.env) {
    auto it = b.env.find(k);
    if (it == b.env.end())
      d.env.push_back({k, v, ""});
    else if (it->second != v)
      d.env.push_back({k, v, it->second});
  }
  for (const auto& [k, v] : b.env)
    if (!a.env.count(k)) d.env.push_back({k, "", v});
  return d;
}

}  // namespace autotune::profiles
