#include "cli/check_text.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include "report/table_format.hpp"

namespace autotune::cli {
namespace {

std::string gbps(const std::optional<double>& v) {
  return v ? report::format_gbps(*v) : "-";
}

// "GPU3 412.0": the slowest measured entry and which one it is.
std::string slowest(const std::vector<std::optional<double>>& values, const char* prefix) {
  std::optional<size_t> at;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] && (!at || *values[i] < *values[*at])) at = i;
  return at ? std::string(prefix) + std::to_string(*at) + " " + report::format_gbps(*values[*at]) : "-";
}

std::string devices(const topology::NodeHealth& h) {
  std::string out;
  for (const auto& f : h.findings) {
    const std::string item = std::string(topology::severity_name(f.severity)) + " " + f.device;
    if (out.find(item) == std::string::npos) out += (out.empty() ? "" : ", ") + item;
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string check_text(const check::CheckReport& r) {
  std::ostringstream out;
  out << "check: " << r.nodes.size() << " node(s) x " << r.gpus_per_node << " GPU(s), " << r.source;
  if (r.measured)
    out << ", " << r.passes.size() << " pass(es) of all-reduce at " << report::human_size(r.bytes);
  else if (!r.journal.empty())
    out << ", from the calibration journal " << r.journal << " (" << r.journal_groups
        << " group(s) of shapes measured several at once)";
  else
    out << ", health only";
  out << "\n";
  if (!r.runner.empty()) out << "  " << r.runner << "\n";
  using report::Align;
  report::TextTable t(
      {"node", "host", "status", "all-reduce", "slowest GPU pair", "slowest rail", "findings"},
      {Align::right, Align::left, Align::left, Align::right, Align::right, Align::right, Align::left});
  for (const auto& n : r.nodes)
    t.add_row({std::to_string(n.health.node), n.health.host.empty() ? "-" : n.health.host,
               std::string(topology::node_status(n.health.findings)), gbps(n.baselines.allreduce_gbps),
               slowest(n.baselines.gpu_gbps, "GPU"), slowest(n.baselines.rail_gbps, "rail "),
               devices(n.health)});
  out << "\n" << t.render();
  if (r.measured) {
    out << "\nmedians (GB/s bus bandwidth): all-reduce " << report::format_gbps(r.baselines.allreduce_median)
        << ", GPU pair " << report::format_gbps(r.baselines.gpu_median) << ", rail "
        << report::format_gbps(r.baselines.rail_median);
    if (r.baselines.ring_median > 0.0)
      out << ", send/recv ring " << report::format_gbps(r.baselines.ring_median);
    if (r.baselines.alltoall_gbps) out << ", all-to-all " << report::format_gbps(*r.baselines.alltoall_gbps);
    if (!r.nodes.empty()) {
      const auto& hw = r.nodes.front().hardware;
      out << "; the probe's figures (node 0): " << report::format_gbps(hw.intra_gbps)
          << " per GPU inside the node";
      if (!hw.rail_gbps.empty()) out << ", " << report::format_gbps(hw.rail_gbps.front()) << " on rail 0";
    }
    out << "\n";
  }
  for (const auto& p : r.passes)
    if (!p.error.empty()) out << "pass " << check::pass_label(p.pass) << " failed: " << p.error << "\n";
  bool header = false;
  for (const auto& n : r.nodes)
    for (const auto& f : n.health.findings) {
      if (!header) out << "\nfindings:\n", header = true;
      out << "  node " << n.health.node << "  " << topology::severity_name(f.severity) << "  " << f.device
          << ": " << f.message << "\n      " << f.reading << " (" << f.source << ")\n";
    }
  if (!r.fabric_env.empty()) {
    out << "\nfabric settings every node agrees on:";
    for (const auto& [k, v] : r.fabric_env) out << " " << k << "=" << v;
    out << "\n";
  }
  std::vector<std::string> blocking;
  for (const auto& n : r.nodes)
    if (!topology::may_calibrate(n.health)) blocking.push_back(std::to_string(n.health.node));
  out << "\nstatus: " << r.status();
  if (!blocking.empty()) {
    out << " (" << blocking.size() << " of " << r.nodes.size() << " node(s) must not be calibrated on:";
    for (const auto& b : blocking) out << " " << b;
    out << ")";
  }
  out << "\n";
  return out.str();
}

}  // namespace autotune::cli
