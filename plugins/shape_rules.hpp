#pragma once
// A loaded profile's rules compiled for one communicator shape, once per process and shared by every
// communicator of that shape: MoE and 5-D parallel jobs create dozens of communicators of a few shapes, and
// compiling 10,000 rules for each cost 0.3 ms where a later init may cost 20 us (issue 27). What is compiled
// depends only on the profile (immutable once loaded), the shape, and the job's NCCL buffer sizes (which
// chunk sizes its buffers hold), so those are the key. Thread-safe: ShapeRulesCache::get() takes a mutex
// (communicator init only); what it returns is immutable.

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nccl/chunk_size.hpp"
#include "profiles/profile.hpp"
#include "profiles/rule_table.hpp"

namespace autotune::plugin {

struct ShapeRules {
  profiles::CommShape shape;
  nccl::BufferSizes buffers;
  profiles::RuleTable table;
  std::string scale_note;  // "; shape not calibrated, ..." for the INFO line, or empty
  // The profile's rules with the chunk sizes these buffers cannot hold taken out; empty when none was.
  std::vector<profiles::Rule> own_rules;
  std::vector<size_t> chunk_lines;  // the rules (indices) that lost their chunk size
  const std::vector<profiles::Rule>& rules(const profiles::Profile& p) const {
    return chunk_lines.empty() ? p.rules : own_rules;
  }
};

// "2x8 (16 ranks)", "2x4-8 (12 ranks)": a shape as the plugin's log lines name it.
std::string shape_text(const profiles::CommShape& c);

class ShapeRulesCache {
 public:
  // The rules of `profile` for `shape` under this process's NCCL buffer sizes: compiled by the first caller,
  // the same object for every later one; *reused says which this call was.
  std::shared_ptr<const ShapeRules> get(const profiles::Profile& profile, const profiles::CommShape& shape,
                                        bool* reused);

 private:
  std::mutex mutex_;
  std::optional<bool> any_chunk_;  // whether any rule names a chunk size (then the buffers matter)
  std::vector<std::shared_ptr<const ShapeRules>> compiled_;
};

}  // namespace autotune::plugin
