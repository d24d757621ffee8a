#include "nccl_tests/import_nccl_tests.hpp"

#include <algorithm>
#include <set>

#include "common/input_error.hpp"
#include "nccl/version.hpp"
#include "runners/bandwidth.hpp"

namespace autotune::nccl_tests {

using tuner::JournalHeader;
using tuner::JournalRecord;

using nccl::Collective;
using runners::algbw_gbps;
using runners::busbw_gbps;
using runners::Candidate;
using runners::Measurement;
using runners::Outcome;
using runners::ProcessSetting;
using runners::Scale;
namespace {

std::string where(const NcclTestsLog& log, int line) {
  return line > 0 ? log.file + ":" + std::to_string(line) : log.file;
}

// NCCL_ALGO / NCCL_PROTO as NCCL printed them: one name, or `func:name` entries. Only a single choice for
// this collective says what was measured; lists and negations ("^LL128") leave NCCL a choice.
template <typename T, typename Parse>
std::optional<T> single_choice(const std::string& value, const std::string& collective, Parse parse,
                               const NcclTestsLog& log, const char* variable) {
  std::string chosen;
  size_t pos = 0;
  bool first = true;
  while (pos <= value.size()) {
    size_t end = value.find(';', pos);
    if (end == std::string::npos) end = value.size();
    std::string entry = value.substr(pos, end - pos);
    pos = end + 1;
    if (entry.empty()) continue;
    auto colon = entry.find(':');
    if (colon != std::string::npos) {
      auto func = nccl_tests_collective_name(entry.substr(0, colon));
      if (func && *func == collective) chosen = entry.substr(colon + 1);
    } else if (first) {
      chosen = entry;
    }
    first = false;
  }
  if (chosen.empty()) return std::nullopt;
  if (chosen.find(',') != std::string::npos || chosen[0] == '^')
    throw InputError(
        log.file, 0,
        std::string("the log ran with ") + variable + "=" + value +
            ", which leaves NCCL a choice: say what was measured with --algo/--proto or --default");
  auto parsed = parse(chosen);
  if (!parsed)
    throw InputError(
        log.file, 0,
        std::string("the log's ") + variable + " value '" + chosen + "' is not a name NCCL knows");
  return parsed;
}

std::string version_from_code(int code) {
  auto v = nccl::Version::from_code(code);
  return v ? v->text() : "";
}

}  // namespace

Candidate imported_candidate(const NcclTestsLog& log, const ImportOptions& options,
                             std::vector<std::string>* warnings) {
  Candidate from_log;
  if (log.env_algo)
    from_log.algorithm = single_choice<nccl::Algorithm>(*log.env_algo, log.collective, nccl::parse_algorithm,
                                                        log, "NCCL_ALGO");
  if (log.env_proto)
    from_log.protocol = single_choice<nccl::Protocol>(*log.env_proto, log.collective, nccl::parse_protocol,
                                                      log, "NCCL_PROTO");
  bool options_say = options.as_default || options.algorithm || options.protocol;
  Candidate c = from_log;
  if (options_say) {
    Candidate asked;
    if (!options.as_default) {
      asked.algorithm = options.algorithm;
      asked.protocol = options.protocol;
    }
    if (!from_log.is_default() && asked != from_log && warnings)
      warnings->push_back(log.file + ": the log says it ran " + to_string(from_log) + "; imported as " +
                          to_string(asked) + " as the options say");
    c = asked;
  } else if (from_log.is_default()) {
    throw InputError(log.file, 0,
                     "the log does not say what NCCL was forced to (no 'NCCL_ALGO set by environment' line): "
                     "give --algo A --proto P, or --default when it ran NCCL's own choice");
  }
  if (!options.as_default) c.channels = options.channels;
  if (auto coll = log.nccl_collective()) {
    if (c.algorithm && !nccl::is_allowed(*coll, *c.algorithm))
      throw InputError(log.file, 0,
                       "NCCL cannot run " + log.collective + " with " +
                           std::string(nccl::name(*c.algorithm)) +
                           " (allowed: " + nccl::allowed_algorithms_text(*coll) + ")");
    if (c.algorithm && c.protocol && !nccl::is_allowed(*coll, *c.algorithm, *c.protocol))
      throw InputError(log.file, 0,
                       "NCCL cannot run " + log.collective + " with " +
                           std::string(nccl::name(*c.algorithm)) + "/" +
                           std::string(nccl::name(*c.protocol)));
  }
  return c;
}

ImportResult import_nccl_tests(std::span<const NcclTestsLog> logs, const ImportOptions& options) {
  ImportResult out;
  JournalHeader& h = out.header;
  h.created = options.time;
  h.command = options.command;
  h.source = "imported";
  h.strategy = "imported";
  h.fingerprint = options.fingerprint;
  h.cluster = options.cluster;
  h.settings = {ProcessSetting{"default", {}}};
  std::set<Collective> collectives;
  std::set<Scale> scales;
  uint64_t min_bytes = UINT64_MAX, max_bytes = 0;

  for (const NcclTestsLog& log : logs) {
    for (const auto& w : log.warnings) out.warnings.push_back(where(log, w.line) + ": " + w.text);
    auto coll = log.nccl_collective();
    if (!coll) {
      out.warnings.push_back(log.file + ": " + log.collective +
                             " is point-to-point (NCCL's tuner never sees it): not imported");
      continue;
    }
    Candidate candidate = imported_candidate(log, options, &out.warnings);
    int ranks = log.ranks();
    Scale scale;
    scale.ranks = ranks;
    if (options.nodes) {
      scale.nodes = *options.nodes;
      int said = log.nccl_nodes.value_or(log.hosts());
      if (said > 0 && said != *options.nodes)
        out.warnings.push_back(log.file + ": the log shows " + std::to_string(said) + " nodes; imported as " +
                               std::to_string(*options.nodes) + " as --nodes says");
    } else if (log.nccl_nodes) {
      scale.nodes = *log.nccl_nodes;
    } else if (log.hosts() > 0) {
      scale.nodes = log.hosts();
    } else {
      throw InputError(log.file, 0, "the log does not show how many nodes it ran on: give --nodes N");
    }
    if (scale.nodes < 1 || scale.nodes > ranks)
      throw InputError(log.file, 0,
                       "expected between 1 and " + std::to_string(ranks) + " nodes for " +
                           std::to_string(ranks) + " ranks, found " + std::to_string(scale.nodes));
    scales.insert(scale);
    collectives.insert(*coll);
    if (h.cluster.empty() && !log.header.ranks.empty()) h.cluster = log.header.ranks.front().host;
    if (h.gpu_model.empty() && !log.header.ranks.empty()) h.gpu_model = log.header.ranks.front().gpu_name;
    if (h.nccl_version.empty())
      h.nccl_version =
          log.nccl_version.empty() ? version_from_code(log.header.nccl_library) : log.nccl_version;
    if (scale.ranks > h.nodes * std::max(h.gpus_per_node, 1) || h.nodes == 0) {
      h.nodes = scale.nodes;
      h.gpus_per_node = scale.ranks / scale.nodes;
    }
    std::string runner = "nccl-tests" +
                         (log.header.tests_version.empty() ? "" : " " + log.header.tests_version) + " " +
                         (log.header.program.empty() ? log.collective : log.header.program) + " (" +
                         std::filesystem::path(log.file).filename().string() + ")";
    if (h.runner.empty()) h.runner = runner;

    // A log run with several data types (-d all) measures each size once per type; the first type is what a
    // profile is about (NCCL's tuner sees bytes, not types), the others would pool unlike timings.
    const std::string& type = log.rows.front().type;
    const std::string& redop = log.rows.front().redop;
    size_t other_types = 0;
    for (const NcclTestsRow& row : log.rows) {
      if (row.type != type || row.redop != redop) {
        ++other_types;
        continue;
      }
      JournalRecord r;
      r.setting = ProcessSetting{"default", {}};
      r.scale = scale;
      r.source = "imported";
      r.runner = runner;
      r.time = options.time;
      Measurement& m = r.measurement;
      m.request.collective = *coll;
      m.request.bytes = row.bytes;
      m.request.candidate = candidate;
      // Each half of a row is one timed loop of `iters` operations: two repetitions.
      m.request.repetitions = 2;
      m.times_us = {row.out_of_place.time_us, row.in_place.time_us};
      m.mean_times_us = m.times_us;
      double median = m.median_us();
      m.algbw_gbps = algbw_gbps(row.bytes, median);
      m.busbw_gbps = busbw_gbps(*coll, ranks, row.bytes, median);
      if (row.wrong()) {
        m.outcome = Outcome::wrong_result;
        auto count = [](const NcclTestsResult& x) {
          return x.check ? std::to_string(*x.check) : std::string("N/A");
        };
        m.detail = where(log, row.line) + ": nccl-tests found wrong results (" +
                   (log.header.old_error_column ? "error " : "#wrong ") + count(row.out_of_place) +
                   " out-of-place, " + count(row.in_place) + " in-place)";
      }
      // Identical requests count up, as the journal's `attempt` asks.
      for (const JournalRecord& prev : out.records)
        if (prev.scale == r.scale && prev.measurement.request.collective == m.request.collective &&
            prev.measurement.request.bytes == m.request.bytes &&
            prev.measurement.request.candidate == candidate)
          ++r.attempt;
      min_bytes = std::min(min_bytes, row.bytes);
      max_bytes = std::max(max_bytes, row.bytes);
      out.records.push_back(std::move(r));
    }
    if (other_types > 0)
      out.warnings.push_back(log.file + ": " + std::to_string(other_types) + " rows of other data types or " +
                             "operations than the first (" + type + (redop.empty() ? "" : " " + redop) +
                             ") not imported");
  }
  if (out.records.empty()) throw InputError("no nccl-tests row could be imported (see the warnings)");
  h.collectives.assign(collectives.begin(), collectives.end());
  h.scales.assign(scales.begin(), scales.end());
  h.min_bytes = min_bytes;
  h.max_bytes = max_bytes;
  h.repetitions = 2;
  return out;
}

}  // namespace autotune::nccl_tests
