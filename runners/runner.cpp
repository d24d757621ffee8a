#include "runners/runner.hpp"

#include <algorithm>
#include <array>

#include "runners/process_setting.hpp"

namespace autotune::runners {

std::string shape_text(const Scale& s) {
  return std::to_string(s.nodes) + "x" + std::to_string(s.ranks_per_node());
}

std::string to_string(const Candidate& c) {
  if (c.is_default()) return "default";
  std::string out = c.algorithm ? std::string(nccl::name(*c.algorithm)) : "*";
  out += "/";
  out += c.protocol ? std::string(nccl::name(*c.protocol)) : "*";
  if (c.channels > 0) out += "/ch" + std::to_string(c.channels);
  return out;
}

std::string_view name(Outcome o) {
  static constexpr std::array<std::string_view, 5> kNames = {"ok", "unsupported", "wrong_result", "timed_out",
                                                             "failed"};
  return kNames[static_cast<int>(o)];
}

double Measurement::median_us() const {
  if (times_us.empty()) return 0.0;
  std::vector<double> sorted = times_us;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

}  // namespace autotune::runners
