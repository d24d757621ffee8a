#include "simulator/fidelity.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "runners/bandwidth.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"

namespace autotune::sim {

FidelityRow simulate_point(const PublishedPoint& point, const topology::Topology& node,
                           const SimDeviations& deviations) {
  const std::string where = "point of line " + std::to_string(point.line) + " (" + point.machine + ")";
  SimCluster cluster = describe_cluster(node, point.nodes);
  if (point.gpus_per_node > cluster.node_gpus)
    throw InputError(where, 0,
                     "at most the node's " + std::to_string(cluster.node_gpus) + " GPUs, found " +
                         std::to_string(point.gpus_per_node));
  if (point.gpus_per_node < cluster.node_gpus)
    cluster = shape_cluster(cluster, point.gpus_per_node, /*concurrent=*/false);
  const SimModel model(std::move(cluster), point.env, deviations);
  runners::Candidate forced;
  forced.algorithm = point.algorithm;
  std::string why;
  const auto choice = model.resolve(point.collective, point.bytes, forced, &why);
  if (!choice) throw InputError(where, 0, "a point the simulated machine can run; " + why);
  FidelityRow row;
  row.point = point;
  row.choice = *choice;
  const double us = model.true_time_us(point.collective, point.bytes, *choice);
  row.simulated_gbps = runners::busbw_gbps(point.collective, model.cluster().ranks(), point.bytes, us);
  row.error = (row.simulated_gbps - point.busbw_gbps) / point.busbw_gbps;
  return row;
}

std::vector<FidelityRow> fidelity_rows(const std::vector<PublishedPoint>& points,
                                       const SimDeviations& deviations) {
  std::vector<FidelityRow> rows;
  for (const auto& p : points)
    rows.push_back(simulate_point(p, topology::load_example(p.machine), deviations));
  return rows;
}

std::vector<PublishedPoint> points_for(const topology::Topology& node) {
  // The NCCL version is not part of what makes two nodes the same machine here: any fixed one will do.
  const std::string mine = topology::fingerprint(node, 0);
  std::vector<PublishedPoint> out;
  std::string last_machine, last_print;
  for (const auto& p : published_points()) {
    if (p.machine != last_machine)
      last_machine = p.machine, last_print = topology::fingerprint(topology::load_example(p.machine), 0);
    if (last_print == mine) out.push_back(p);
  }
  return out;
}

FidelitySummary summarize(const std::vector<FidelityRow>& rows) {
  FidelitySummary s;
  s.points = rows.size();
  if (rows.empty()) return s;
  std::vector<double> abs;
  for (const auto& r : rows) abs.push_back(std::fabs(r.error));
  std::sort(abs.begin(), abs.end());
  const size_t n = abs.size();
  s.median_abs_error = n % 2 ? abs[n / 2] : 0.5 * (abs[n / 2 - 1] + abs[n / 2]);
  s.worst_abs_error = abs.back();
  return s;
}

std::string format_fidelity(const std::vector<FidelityRow>& rows, const std::string& prefix) {
  std::string out =
      prefix + fmt::format("{:<8} {:>5} {:<14} {:>5} {:<16} {:>9} {:>9} {:>7}  {}\n", "machine", "scale",
                           "collective", "size", "algorithm", "published", "simulated", "error", "source");
  for (const auto& r : rows) {
    const PublishedPoint& p = r.point;
    std::string algo = p.algorithm ? std::string(nccl::nccl_name(*p.algorithm)) + " (forced)"
                                   : std::string(nccl::nccl_name(r.choice.algorithm)) + " (NCCL's)";
    for (const auto& [name, value] : p.env) algo += " " + name + "=" + value;
    out += prefix + fmt::format("{:<8} {:>5} {:<14} {:>5} {:<16} {:>9.1f} {:>9.1f} {:>+6.1f}%  {}\n",
                                p.machine, fmt::format("{}x{}", p.nodes, p.gpus_per_node),
                                std::string(nccl::nccl_name(p.collective)), format_byte_size(p.bytes), algo,
                                p.busbw_gbps, r.simulated_gbps, 100.0 * r.error, p.source);
  }
  const FidelitySummary s = summarize(rows);
  out += prefix + fmt::format("{} point(s): median error {:.1f}%, worst {:.1f}%\n", s.points,
                              100.0 * s.median_abs_error, 100.0 * s.worst_abs_error);
  return out;
}

std::string format_published_for(const topology::Topology& node, const SimDeviations& deviations) {
  const auto points = points_for(node);
  if (points.empty())
    return "# published figures: none for this machine (they exist for " + [] {
      std::string names;
      for (const auto& p : published_points())
        if (names.find(p.machine) == std::string::npos) names += (names.empty() ? "" : ", ") + p.machine;
      return names;
    }() + "); the model's fit is shown by `ctest -L fidelity`\n";
  std::vector<FidelityRow> rows;
  for (const auto& p : points) rows.push_back(simulate_point(p, node, deviations));
  return "# published figures for this machine (busbw GB/s, noise-free simulation at each figure's "
         "scale):\n" +
         format_fidelity(rows, "# ");
}

}  // namespace autotune::sim
