#include "runners/runner.hpp"

#include <algorithm>
#include <array>

#include "nccl/env_policy.hpp"
#include "runners/process_setting.hpp"

namespace autotune::runners {

std::string shape_text(const Scale& s) {
  return std::to_string(s.nodes) + "x" + std::to_string(s.ranks_per_node());
}

bool reaches_one_node(const ProcessSetting& setting) {
  // Only variables NCCL reads for traffic between nodes (transport/net_ib, graph/search, init.cc);
  // anything else (protocols, NVLS, P2P, buffers) may change what a node does inside itself.
  // NCCL reads NCCL_P2P_NET_CHUNKSIZE only when the communicator spans nodes (init.cc computeBuffSizes);
  // channels per network peer, PXN, queue pairs and GPUDirect RDMA concern network connections alone.
  static const char* const kNetworkOnly[] = {
      "NCCL_IB_HCA",      "NCCL_CROSS_NIC",     "NCCL_P2P_NET_CHUNKSIZE",     "NCCL_NCHANNELS_PER_NET_PEER",
      "NCCL_PXN_DISABLE", "NCCL_P2P_PXN_LEVEL", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_NET_GDR_LEVEL"};
  for (const auto& [name, value] : setting.env)
    if (std::find(std::begin(kNetworkOnly), std::end(kNetworkOnly), name) == std::end(kNetworkOnly))
      return true;
  return false;
}

bool only_point_to_point(const ProcessSetting& setting) {
  if (setting.env.empty()) return false;
  for (const auto& [name, value] : setting.env)
    if (!nccl::is_point_to_point_env_key(name)) return false;
  return true;
}

std::string describe_shape(const Scale& s) {
  return shape_text(s) + " (" + std::to_string(s.ranks) + (s.ranks == 1 ? " rank)" : " ranks)");
}

std::string to_string(const Candidate& c) {
  if (c.is_default()) return "default";
  std::string out = c.algorithm ? std::string(nccl::name(*c.algorithm)) : "*";
  out += "/";
  out += c.protocol ? std::string(nccl::name(*c.protocol)) : "*";
  if (c.channels > 0) out += "/ch" + std::to_string(c.channels);
  return out;
}

std::optional<Candidate> parse_candidate(std::string_view text) {
  if (text == "default") return Candidate{};
  Candidate c;
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view algo = text.substr(0, slash), rest = text.substr(slash + 1);
  size_t second = rest.find('/');
  std::string_view proto = rest.substr(0, second);
  if (algo != "*" && !(c.algorithm = nccl::parse_algorithm(algo))) return std::nullopt;
  if (proto != "*" && !(c.protocol = nccl::parse_protocol(proto))) return std::nullopt;
  if (second != std::string_view::npos) {
    std::string_view ch = rest.substr(second + 1);
    if (!ch.starts_with("ch") || ch.size() < 3 || ch.size() > 4) return std::nullopt;
    int n = 0;
    for (char d : ch.substr(2)) {
      if (d < '0' || d > '9') return std::nullopt;
      n = n * 10 + (d - '0');
    }
    if (n < 1 || n > 64) return std::nullopt;
    c.channels = n;
  }
  if (c.is_default()) return std::nullopt;  // "*/*" says nothing: "default" is the spelling
  return c;
}

namespace {
constexpr std::array<std::string_view, 5> kOutcomeNames = {"ok", "unsupported", "wrong_result", "timed_out",
                                                           "failed"};
}

std::string_view name(Outcome o) {
  return kOutcomeNames[static_cast<int>(o)];
}

std::optional<Outcome> parse_outcome(std::string_view text) {
  for (size_t i = 0; i < kOutcomeNames.size(); ++i)
    if (kOutcomeNames[i] == text) return static_cast<Outcome>(i);
  return std::nullopt;
}

void MeasureRequest::set_operation(nccl::Operation op) {
  if (auto c = nccl::as_collective(op)) {
    collective = *c;
    point_to_point.reset();
  } else {
    point_to_point = op;
  }
}

double Measurement::median_us() const {
  if (times_us.empty()) return 0.0;
  std::vector<double> sorted = times_us;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

}  // namespace autotune::runners
