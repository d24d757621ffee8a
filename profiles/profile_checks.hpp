#pragma once
// Internal to the profiles module: the checks the profile reader (profile_reader.cpp) and validate_profile
// share, and the pieces of their messages. Every failure is an InputError naming the file, the line and the
// key. Pure functions: thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/input_error.hpp"
#include "nccl/chunk_size.hpp"
#include "profiles/profile.hpp"

namespace autotune::profiles::checks {

std::string in_quotes(std::string_view s);
std::string all_collective_names();
std::string all_algorithm_names();
// "rule[12]": rules count from 1 in file order.
std::string rule_key(size_t index);
// Shortest round-trip text of a double that stays a TOML float ("1.0", "0.03").
std::string format_double(double v);

// The key a message names. A rule's keys ("rule[12].min_bytes") are assembled only when a message needs one:
// building them eagerly cost a few heap allocations per rule, most of the reader's own time at 10,000 rules.
class KeyRef {
 public:
  KeyRef(const std::string& whole) : whole_(&whole) {}  // NOLINT: implicit on purpose
  KeyRef(size_t rule_index, std::string_view field) : rule_(rule_index), field_(field) {}
  std::string str() const {
    if (whole_) return *whole_;
    std::string key = rule_key(rule_);
    if (!field_.empty()) key.append(".").append(field_);
    return key;
  }

 private:
  const std::string* whole_ = nullptr;  // only valid during the call that received this KeyRef
  size_t rule_ = 0;
  std::string_view field_;
};

struct Where {
  std::string_view file;
  [[noreturn]] void fail(int line, const std::string& key, const std::string& message) const {
    throw InputError(std::string(file), line, key + ": " + message);
  }
  [[noreturn]] void fail(int line, const KeyRef& key, const std::string& message) const {
    fail(line, key.str(), message);
  }
};

void check_cluster(const Where& w, const ClusterInfo& c, int line);
void check_provenance(const Where& w, const Provenance& p, int created_line, int version_line);
void check_env(const Where& w, const std::string& key, const std::string& value, int line);
void check_constant(const Where& w, const ConstantOverride& c);
void check_count_range(const Where& w, const std::optional<CountRange>& r, int line, const KeyRef& key);

// The line of each of a rule's keys, for messages (the rule's own line where a key is absent).
struct RuleLines {
  int header = 0, algorithm = 0, protocol = 0, max_bytes = 0, channels = 0, nodes = 0, ranks = 0,
      ranks_per_node = 0, evidence = 0, pipe_ops = 0, chunk_bytes = 0, runner_up = 0;
};
void check_rule(const Where& w, const Rule& r, size_t index, const RuleLines& lines,
                const nccl::BufferSizes& buffers);

// No two rules overlap (rules_overlap).
void check_overlaps(const Where& w, const std::vector<Rule>& rules);

}  // namespace autotune::profiles::checks
