#include "plugins/shape_rules.hpp"

#include <algorithm>
#include <cstdlib>

namespace autotune::plugin {
namespace {

// NCCL clamps a chunk size its buffers cannot hold, so the measured setting would not run: such rules keep
// NCCL's chunk. The profile reader checked them against the profile's own NCCL_BUFFSIZE; the job's
// environment may set smaller buffers.
nccl::BufferSizes job_buffers() {
  return nccl::buffer_sizes([](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  });
}

bool same_shape(const profiles::CommShape& a, const profiles::CommShape& b) {
  return a.nodes == b.nodes && a.ranks == b.ranks && a.min_ranks_per_node == b.min_ranks_per_node &&
         a.max_ranks_per_node == b.max_ranks_per_node;
}

std::shared_ptr<ShapeRules> compile_shape(const profiles::Profile& p, const profiles::CommShape& shape,
                                          const nccl::BufferSizes& buffers, bool any_chunk) {
  auto out = std::make_shared<ShapeRules>();
  out->shape = shape;
  out->buffers = buffers;
  if (any_chunk) {
    out->own_rules = p.rules;
    for (size_t i = 0; i < out->own_rules.size(); ++i) {
      profiles::Rule& r = out->own_rules[i];
      if (r.chunk_bytes != 0 &&
          nccl::chunk_problem(r.chunk_bytes, r.collective, r.algorithm, r.protocol, buffers)) {
        r.chunk_bytes = 0;
        out->chunk_lines.push_back(i);
      }
    }
    if (out->chunk_lines.empty()) std::vector<profiles::Rule>().swap(out->own_rules);
  }
  const std::vector<profiles::Rule>& rules = out->rules(p);
  auto nearest = profiles::nearest_named_scale(rules, shape, p.cluster.gpus_per_node);
  if (nearest && p.uncalibrated == profiles::UncalibratedPolicy::nearest_scale) {
    out->table = profiles::RuleTable::compile(rules, *nearest);
    out->scale_note = "; shape not calibrated, policy nearest: the rules of " + shape_text(*nearest);
  } else {
    out->table = profiles::RuleTable::compile(rules, shape);
    if (nearest) out->scale_note = "; shape not calibrated, policy nccl: NCCL decides";
  }
  return out;
}

}  // namespace

std::string shape_text(const profiles::CommShape& c) {
  const std::string per_node = c.even()                   ? std::to_string(c.min_ranks_per_node)
                               : c.min_ranks_per_node > 0 ? std::to_string(c.min_ranks_per_node) + "-" +
                                                                std::to_string(c.max_ranks_per_node)
                                                          : "?";
  return std::to_string(c.nodes) + "x" + per_node + " (" + std::to_string(c.ranks) + " ranks)";
}

std::shared_ptr<const ShapeRules> ShapeRulesCache::get(const profiles::Profile& profile,
                                                       const profiles::CommShape& shape, bool* reused) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!any_chunk_)
    any_chunk_ = std::any_of(profile.rules.begin(), profile.rules.end(),
                             [](const profiles::Rule& r) { return r.chunk_bytes != 0; });
  // Only chunk sizes depend on the buffers: without any, every environment compiles the same table.
  const nccl::BufferSizes buffers = *any_chunk_ ? job_buffers() : nccl::BufferSizes{};
  *reused = true;
  for (const auto& c : compiled_)
    if (same_shape(c->shape, shape) && c->buffers == buffers) return c;
  *reused = false;
  compiled_.push_back(compile_shape(profile, shape, buffers, *any_chunk_));
  return compiled_.back();
}

}  // namespace autotune::plugin
