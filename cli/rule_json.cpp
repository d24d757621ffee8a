#include "cli/rule_json.hpp"

#include "profiles/profile_toml.hpp"

namespace autotune::cli {

nlohmann::json rule_json(const profiles::Rule& r) {
  using profiles::format_count_range;
  nlohmann::json j = {{"collective", nccl::name(r.collective)},
                      {"min_bytes", r.min_bytes},
                      {"max_bytes", r.max_bytes},
                      {"algorithm", nccl::name(r.algorithm)},
                      {"protocol", nccl::name(r.protocol)},
                      {"channels", r.channels},
                      {"nodes", format_count_range(r.nodes)},
                      {"ranks", format_count_range(r.ranks)}};
  if (r.busbw_gbps) j["busbw_gbps"] = *r.busbw_gbps;
  if (r.default_busbw_gbps) j["default_busbw_gbps"] = *r.default_busbw_gbps;
  if (auto g = profiles::gain_of(r)) j["gain"] = *g;
  if (r.gain) {
    j["gain_low"] = r.gain->low;
    j["gain_high"] = r.gain->high;
    j["confidence"] = r.gain->confidence;
    j["sizes"] = r.gain->sizes;
    j["default_samples"] = r.gain->default_samples;
  }
  if (r.samples) j["samples"] = *r.samples;
  if (r.basis) j["basis"] = std::string(profiles::name(*r.basis));
  if (r.ranks_per_node) j["ranks_per_node"] = format_count_range(r.ranks_per_node);
  if (r.pipe_ops) j["pipe_ops"] = format_count_range(r.pipe_ops);
  if (r.reg_buff) j["reg_buff"] = *r.reg_buff;
  if (r.chunk_bytes) j["chunk_bytes"] = r.chunk_bytes;
  if (r.runner_up) {
    j["runner_up"] = profiles::runner_up_text(*r.runner_up);
    j["runner_up_busbw_gbps"] = r.runner_up->busbw_gbps;
  }
  return j;
}

}  // namespace autotune::cli
