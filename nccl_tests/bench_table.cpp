#include "nccl_tests/bench_table.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/input_error.hpp"
#include "profiles/profile.hpp"
#include "runners/bandwidth.hpp"

namespace autotune::nccl_tests {

using nccl::Collective;
using runners::element_count;
using runners::Measurement;
using runners::Outcome;
using runners::RunnerInfo;

uint64_t parse_size(std::string_view text, const std::string& context) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  uint64_t shift = 0;
  bool ok = digits > 0 && digits <= 15;
  if (ok && digits < text.size()) {
    ok = digits + 1 == text.size();
    switch (std::toupper(static_cast<unsigned char>(text[digits]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        ok = false;
    }
  }
  const uint64_t value = ok ? std::stoull(std::string(text.substr(0, digits))) : 0;  // at most 15 digits
  if (!ok || value > (UINT64_MAX >> shift))
    throw InputError(context, 0, "a size such as 8, 64K, 1M or 8G, found '" + std::string(text) + "'");
  return value << shift;
}

std::vector<uint64_t> size_sweep(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor) {
  if (min_bytes == 0) throw InputError("<argument>", 0, "a minimum size above 0 (-b), found 0");
  if (min_bytes > max_bytes)
    throw InputError(
        "<argument>", 0,
        fmt::format("a maximum size (-e) at least the minimum {}, found {}", min_bytes, max_bytes));
  if (factor < 2)
    throw InputError("<argument>", 0, fmt::format("a size factor (-f) of at least 2, found {}", factor));
  std::vector<uint64_t> sizes;
  for (uint64_t b = min_bytes; b <= max_bytes; b *= factor) {
    sizes.push_back(b);
    if (b > std::numeric_limits<uint64_t>::max() / factor) break;
  }
  return sizes;
}

namespace {

std::string used_text(const Measurement& m) {
  if (!m.used_algorithm && !m.used_protocol) return "-";
  std::string s = m.used_algorithm ? std::string(nccl::name(*m.used_algorithm)) : "?";
  s += "/";
  s += m.used_protocol ? std::string(nccl::name(*m.used_protocol)) : "?";
  if (m.used_channels > 0) s += "/ch" + std::to_string(m.used_channels);
  return s;
}

}  // namespace

std::string format_table(const RunnerInfo& info, std::span<const Measurement> results) {
  std::string out;
  // Simulated and stand-in numbers come from the model: every line that shows one says so.
  const auto source = profiles::parse_source(info.source);
  const bool simulated = source && profiles::from_model(*source);
  const std::string tag =
      simulated ? std::string(*source == profiles::Source::simulated ? "simulated" : "stand-in") : "";
  if (source == profiles::Source::simulated)
    out += "# simulated: these numbers come from a model of NCCL, not from GPUs\n";
  if (source == profiles::Source::standin)
    out +=
        "# stand-in: the stand-in NCCL of tests/standin ran these; times come from a model of NCCL, not from "
        "GPUs\n";
  out += "# " + info.description + "\n";
  out += fmt::format("# ranks {} ({} node(s) x {} GPU(s)), {}, NCCL {}\n#\n", info.ranks, info.nodes,
                     info.gpus_per_node, info.gpu_model, info.nccl_version);
  std::string current;
  double busbw_sum = 0.0;
  int busbw_count = 0;
  for (const auto& m : results) {
    std::string section =
        std::string(nccl::nccl_name(m.request.collective)) + " " + to_string(m.request.candidate);
    if (section != current) {
      current = section;
      out += fmt::format("# {} (forced: {}){}\n", nccl::nccl_name(m.request.collective),
                         to_string(m.request.candidate), simulated ? "  [" + tag + "]" : "");
      out += fmt::format("#{:>11} {:>12} {:>8} {:>6} {:>6}  {:>10} {:>8} {:>8} {:>6}  {}\n", "size", "count",
                         "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "algo/proto/channels");
      out += fmt::format("#{:>11} {:>12} {:>8} {:>6} {:>6}  {:>10} {:>8} {:>8} {:>6}\n", "(B)", "(elements)",
                         "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
    }
    const bool rooted =
        m.request.collective == Collective::broadcast || m.request.collective == Collective::reduce;
    uint64_t count = element_count(m.request.collective, info.ranks, m.request.bytes);
    std::string redop =
        m.request.collective == Collective::broadcast || m.request.collective == Collective::allgather
            ? "none"
            : "sum";
    std::string prefix = fmt::format(" {:>11} {:>12} {:>8} {:>6} {:>6}", m.request.bytes, count, "float",
                                     redop, rooted ? "0" : "-1");
    if (m.outcome == Outcome::ok || m.outcome == Outcome::wrong_result) {
      int wrong = m.outcome == Outcome::wrong_result ? 1 : 0;
      out += fmt::format("{}  {:>10.2f} {:>8.2f} {:>8.2f} {:>6}  {}\n", prefix, m.median_us(), m.algbw_gbps,
                         m.busbw_gbps, wrong, used_text(m));
      if (m.outcome == Outcome::ok) busbw_sum += m.busbw_gbps, ++busbw_count;
    } else {
      out += fmt::format("{}  {:>10} {:>8} {:>8} {:>6}  {}: {}\n", prefix, "-", "-", "-", "-",
                         name(m.outcome), m.detail);
    }
  }
  out += fmt::format("# Avg bus bandwidth    : {:.3f}{}\n", busbw_count ? busbw_sum / busbw_count : 0.0,
                     simulated ? "  (" + tag + ")" : "");
  return out;
}

std::string format_json(const RunnerInfo& info, std::span<const Measurement> results) {
  nlohmann::json j;
  j["source"] = info.source;
  j["runner"] = {{"kind", info.kind},
                 {"ranks", info.ranks},
                 {"nodes", info.nodes},
                 {"gpus_per_node", info.gpus_per_node},
                 {"gpu_model", info.gpu_model},
                 {"nccl_version", info.nccl_version},
                 {"description", info.description}};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& m : results) {
    nlohmann::json r;
    r["collective"] = nccl::name(m.request.collective);
    r["bytes"] = m.request.bytes;
    r["count"] = element_count(m.request.collective, info.ranks, m.request.bytes);
    r["type"] = "float";
    r["candidate"] = to_string(m.request.candidate);
    r["outcome"] = name(m.outcome);
    if (!m.detail.empty()) r["detail"] = m.detail;
    r["time_us"] = m.median_us();
    r["algbw_gbps"] = m.algbw_gbps;
    r["busbw_gbps"] = m.busbw_gbps;
    r["wrong"] = m.outcome == Outcome::wrong_result ? 1 : 0;
    r["times_us"] = m.times_us;
    r["mean_times_us"] = m.mean_times_us;
    if (m.used_algorithm) r["algorithm"] = nccl::name(*m.used_algorithm);
    if (m.used_protocol) r["protocol"] = nccl::name(*m.used_protocol);
    if (m.used_channels > 0) r["channels"] = m.used_channels;
    rows.push_back(std::move(r));
  }
  j["results"] = std::move(rows);
  return j.dump(2) + "\n";
}

}  // namespace autotune::nccl_tests
