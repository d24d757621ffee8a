#include "nccl_tests/bench_table.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "autotune/version.hpp"
#include "common/input_error.hpp"
#include "nccl_tests/nccl_tests_log.hpp"
#include "profiles/profile.hpp"
#include "runners/bandwidth.hpp"

namespace autotune::nccl_tests {

using nccl::Collective;
using runners::element_count;
using runners::Measurement;
using runners::Outcome;
using runners::RunnerInfo;

std::vector<uint64_t> size_sweep(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor) {
  if (min_bytes == 0) throw InputError("<arguments>", 0, "a minimum size above 0 (-b), found 0");
  if (min_bytes > max_bytes)
    throw InputError(
        "<arguments>", 0,
        fmt::format("a maximum size (-e) at least the minimum {}, found {}", min_bytes, max_bytes));
  if (factor < 2)
    throw InputError("<arguments>", 0, fmt::format("a size factor (-f) of at least 2, found {}", factor));
  std::vector<uint64_t> sizes;
  for (uint64_t b = min_bytes; b <= max_bytes; b *= factor) {
    sizes.push_back(b);
    if (b > std::numeric_limits<uint64_t>::max() / factor) break;
  }
  return sizes;
}

std::string_view nccl_tests_program(nccl::Operation op) {
  switch (op) {
    case nccl::Operation::alltoall:
      return "alltoall_perf";
    case nccl::Operation::sendrecv:
      return "sendrecv_perf";
    case nccl::Operation::gather:
      return "gather_perf";
    case nccl::Operation::scatter:
      return "scatter_perf";
    default:
      break;
  }
  switch (*nccl::as_collective(op)) {
    case Collective::allreduce:
      return "all_reduce_perf";
    case Collective::allgather:
      return "all_gather_perf";
    case Collective::reducescatter:
      return "reduce_scatter_perf";
    case Collective::broadcast:
      return "broadcast_perf";
    case Collective::reduce:
      return "reduce_perf";
  }
  return "unknown_perf";
}

namespace {

// "simulated" or "stand-in" for results that come from the model; "" for measured ones.
std::string model_tag(const RunnerInfo& info) {
  const auto source = profiles::parse_source(info.source);
  if (!source || !profiles::from_model(*source)) return "";
  return *source == profiles::Source::simulated ? "simulated" : "stand-in";
}

bool measured(const Measurement& m) {
  return m.outcome == Outcome::ok || m.outcome == Outcome::wrong_result;
}

// nccl-tests' getFloatStr: two decimals, or fewer where the value would not fit its column.
std::string float_str(double v, int width) {
  for (const char* f : {"{:>{}.2f}", "{:>{}.1f}", "{:>{}.0f}"}) {
    std::string s = fmt::format(fmt::runtime(f), v, width);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return width >= 7 ? fmt::format("{:>{}.1e}", v, width) : fmt::format("{:>{}.0e}", v, width);
}

std::string used_text(const Measurement& m) {
  if (!m.used_algorithm && !m.used_protocol) return "-";
  runners::Candidate used{m.used_algorithm, m.used_protocol, m.used_channels};
  return to_string(used);
}

// nccl-tests checks neither alltoall's nor sendrecv's in-place half (its #wrong reads N/A).
bool unchecked_in_place(nccl::Operation op) {
  return op == nccl::Operation::alltoall || op == nccl::Operation::sendrecv;
}

// The time, algbw, busbw and #wrong of one half, as nccl-tests 2.19 prints them.
std::string half_text(const Measurement& m, bool checked = true) {
  if (!measured(m)) return fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "-", "-", "-", "-");
  return fmt::format("  {}  {}  {}  {:>6}", float_str(m.median_us(), 7), float_str(m.algbw_gbps, 6),
                     float_str(m.busbw_gbps, 6),
                     !checked                             ? std::string("N/A")
                     : m.outcome == Outcome::wrong_result ? "1"
                                                          : "0");
}

std::string last_column(const BenchRow& r) {
  for (const Measurement* m : {&r.out_of_place, &r.in_place})
    if (!measured(*m)) return std::string(name(m->outcome));
  std::string a = used_text(r.out_of_place), b = used_text(r.in_place);
  return a == b ? a : a + "|" + b;
}

// nccl-tests' redop and root columns: alltoall, gather and scatter run with "none", sendrecv with its -o
// (sum by default); roots are 0 for the rooted operations, -1 elsewhere.
std::string redop_of(nccl::Operation op) {
  using nccl::Operation;
  return op == Operation::broadcast || op == Operation::allgather || op == Operation::alltoall ||
                 op == Operation::gather || op == Operation::scatter
             ? "none"
             : "sum";
}

int root_of(nccl::Operation op) {
  using nccl::Operation;
  return op == Operation::broadcast || op == Operation::reduce || op == Operation::gather ||
                 op == Operation::scatter
             ? 0
             : -1;
}

void table_header(std::string& out) {
  out += "#\n";
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place"
      "          \n",
      "", "", "", "", "");
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}"
      "  {}\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
      "#wrong", "algo/proto/channels");
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

// One collective's rows as one nccl-tests test, from its start line to its concluded line.
void one_test(std::string& out, const RunnerInfo& info, std::span<const BenchRow> rows) {
  const nccl::Operation op = rows.front().out_of_place.request.operation();
  const std::string program(nccl_tests_program(op));
  out += "# Collective test starting: " + program + "\n";
  out += bench_header_line(info.ranks, info.nodes, to_string(rows.front().out_of_place.request.candidate),
                           model_tag(info).empty() ? "measured" : info.source, info.nccl_version) +
         "\n";

  table_header(out);
  int wrong_halves = 0, counted = 0;
  double busbw_sum = 0.0;
  for (const BenchRow& r : rows) {
    const uint64_t bytes = r.out_of_place.request.bytes;
    out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", bytes, element_count(op, info.ranks, bytes),
                       "float", redop_of(op), root_of(op));
    out += half_text(r.out_of_place) + half_text(r.in_place, !unchecked_in_place(op)) + "  " +
           last_column(r) + "\n";
    // One reason line per half that did not go well; one for both when they failed alike.
    const bool alike =
        r.out_of_place.outcome == r.in_place.outcome && r.out_of_place.detail == r.in_place.detail;
    for (const auto& [half, m] :
         {std::pair{"out-of-place", &r.out_of_place}, std::pair{"in-place", &r.in_place}}) {
      if (m->outcome != Outcome::ok && !(alike && m == &r.in_place))
        out += fmt::format("#   {} B{}: {}: {}\n", bytes, alike ? "" : std::string(" ") + half,
                           name(m->outcome), m->detail);
      if (m->outcome == Outcome::wrong_result) ++wrong_halves;
      if (measured(*m)) busbw_sum += m->busbw_gbps, ++counted;
    }
  }
  out += fmt::format("# Out of bounds values : {} {}\n", wrong_halves, wrong_halves ? "FAILED" : "OK");
  const std::string tag = model_tag(info);
  out += fmt::format("# Avg bus bandwidth    : {:g} {}\n", counted ? busbw_sum / counted : 0.0,
                     tag.empty() ? "" : "(" + tag + ")");
  out += "#\n# Collective test concluded: " + program + "\n#\n";
}

}  // namespace

std::string format_table(const RunnerInfo& info, std::span<const BenchRow> rows) {
  std::string out;
  out += fmt::format(
      "# nccl-autotune {} bench: nccl-tests' table, plus the algorithm, protocol and channels NCCL "
      "ran\n",
      kToolVersion);
  // Simulated and stand-in numbers come from the model: the table says so before anything else.
  if (info.source == "simulated")
    out += "# simulated: these numbers come from a model of NCCL, not from GPUs\n";
  if (info.source == "standin")
    out +=
        "# stand-in: the stand-in NCCL of tests/standin ran these; times come from a model of NCCL, not "
        "from GPUs\n";
  out += "# " + info.description + "\n";
  out += fmt::format("# ranks {} ({} node(s) x {} GPU(s)), {}, NCCL {}\n#\n", info.ranks, info.nodes,
                     info.gpus_per_node, info.gpu_model, info.nccl_version);
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin;
    while (end < rows.size() &&
           rows[end].out_of_place.request.operation() == rows[begin].out_of_place.request.operation())
      ++end;
    one_test(out, info, rows.subspan(begin, end - begin));
    begin = end;
  }
  return out;
}

namespace {

nlohmann::json half_json(const RunnerInfo& info, const Measurement& m, const char* half) {
  nlohmann::json r;
  r["collective"] = nccl::name(m.request.operation());
  r["half"] = half;
  r["bytes"] = m.request.bytes;
  r["count"] = element_count(m.request.operation(), info.ranks, m.request.bytes);
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
  return r;
}

}  // namespace

std::string format_json(const RunnerInfo& info, std::span<const BenchRow> rows) {
  nlohmann::json j;
  j["source"] = info.source;
  j["runner"] = {{"kind", info.kind},
                 {"ranks", info.ranks},
                 {"nodes", info.nodes},
                 {"gpus_per_node", info.gpus_per_node},
                 {"gpu_model", info.gpu_model},
                 {"nccl_version", info.nccl_version},
                 {"description", info.description}};
  nlohmann::json results = nlohmann::json::array();
  for (const BenchRow& r : rows) {
    results.push_back(half_json(info, r.out_of_place, "out_of_place"));
    results.push_back(half_json(info, r.in_place, "in_place"));
  }
  j["results"] = std::move(results);
  return j.dump(2) + "\n";
}

}  // namespace autotune::nccl_tests
