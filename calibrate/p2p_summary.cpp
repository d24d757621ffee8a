#include "calibrate/p2p_summary.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/byte_size.hpp"

namespace autotune::calibrate {
namespace {

// Per (shape, operation) in first-seen order, per size: the busbw of each ok measurement.
struct P2pSeries {
  runners::Scale scale;
  nccl::Operation op = nccl::Operation::alltoall;
  std::map<uint64_t, std::vector<double>> busbw;
};

std::vector<P2pSeries> p2p_series(std::span<const search::JournalRecord> records) {
  std::vector<P2pSeries> out;
  for (const auto& r : records) {
    const auto& m = r.measurement;
    if (!m.request.point_to_point || !r.setting.is_default() || !r.measured_under.empty() ||
        r.source == "production")
      continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const P2pSeries& s) {
      return s.scale == r.scale && s.op == *m.request.point_to_point;
    });
    if (it == out.end()) it = out.insert(out.end(), P2pSeries{r.scale, *m.request.point_to_point, {}});
    auto& at = it->busbw[m.request.bytes];
    if (m.outcome == runners::Outcome::ok) at.push_back(m.busbw_gbps);
  }
  return out;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

// "busbw 0.01 GB/s at 8 B, 0.52 at 1 KiB, 9.8 at 64 KiB": the smallest, a middle and the largest size.
std::string busbw_text(const std::map<uint64_t, std::vector<double>>& sizes) {
  std::vector<std::pair<uint64_t, double>> ok;
  for (const auto& [bytes, v] : sizes)
    if (!v.empty()) ok.emplace_back(bytes, mean_of(v));
  if (ok.empty()) return "no size succeeded";
  std::vector<size_t> picks = {0};
  if (ok.size() > 2) picks.push_back(ok.size() / 2);
  if (ok.size() > 1) picks.push_back(ok.size() - 1);
  std::string out = "NCCL's default busbw";
  for (size_t k = 0; k < picks.size(); ++k)
    out += fmt::format("{} {:.3g}{} at {}", k ? "," : "", ok[picks[k]].second, k ? "" : " GB/s",
                       human_byte_size(ok[picks[k]].first));
  return out;
}

// "ep (expert parallel), 16 groups of 2x4", or "shape 2x4" without a layout that names it.
std::string who_runs(const runners::Scale& scale, nccl::Operation op,
                     const std::optional<profiles::JobLayout>& layout) {
  std::string out;
  if (layout)
    for (const auto& g : profiles::groups_of_shape(*layout, scale.nodes, scale.ranks)) {
      if (std::find(g.operations.begin(), g.operations.end(), op) == g.operations.end()) continue;
      out += (out.empty() ? "" : " and ") + g.kind + " (" +
             std::string(profiles::kind_title(g.kind).value_or(g.kind)) + "), " + std::to_string(g.groups) +
             (g.groups == 1 ? " group" : " groups");
    }
  return out.empty() ? "shape " + runners::shape_text(scale) : out + " of " + runners::shape_text(scale);
}

}  // namespace

std::vector<std::string> summarize_point_to_point(std::span<const search::JournalRecord> records,
                                                  const std::optional<profiles::JobLayout>& layout) {
  std::vector<std::string> out;
  for (const auto& s : p2p_series(records)) {
    const uint64_t lo = s.busbw.begin()->first, hi = s.busbw.rbegin()->first;
    out.push_back(fmt::format(
        "{}: {} at {} size{} ({}..{}), {}; no per-call rule exists (point-to-point: "
        "process-wide settings only)",
        who_runs(s.scale, s.op, layout), nccl::name(s.op), s.busbw.size(), s.busbw.size() == 1 ? "" : "s",
        human_byte_size(lo), human_byte_size(hi), busbw_text(s.busbw)));
  }
  return out;
}

}  // namespace autotune::calibrate
