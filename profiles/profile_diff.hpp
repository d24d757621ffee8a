#pragma once
// What changed between two profiles: rules matched by (collective, nodes, ranks, byte range), and [env] keys.
// A rule whose range or scale moved shows as one removed and one added; a rule whose choice changed
// (algorithm, protocol, channels) as changed.

#include <string>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::profiles {

struct RuleChange {
  Rule before;
  Rule after;
};

struct EnvChange {
  std::string key;
  std::string before;  // empty: added
  std::string after;   // empty: removed
};

struct ProfileDiff {
  std::vector<Rule> added;
  std::vector<Rule> removed;
  std::vector<RuleChange> changed;
  std::vector<EnvChange> env;
  bool empty() const { return added.empty() && removed.empty() && changed.empty() && env.empty(); }
};

ProfileDiff diff_profiles(const Profile& a, const Profile& b);

// One line per rule for people: "allreduce  64K..1M  nodes 2-8 ranks any  ring/simple  ch 16".
std::string describe_rule_choice(const Rule& r);

}  // namespace autotune::profiles
