#include "nccl_tests/import_nccl_tests.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "common/input_error.hpp"
#include "nccl/version.hpp"
#include "runners/bandwidth.hpp"

namespace autotune::nccl_tests {

using search::JournalHeader;
using search::JournalRecord;

using nccl::Collective;
using runners::algbw_gbps;
using runners::busbw_gbps;
using runners::Candidate;
using runners::ProcessSetting;
using runners::Scale;
namespace {

std::string where(const NcclTestsLog& log, int line) {
  return line > 0 ? log.file + ":" + std::to_string(line) : log.file;
}

// What a test's records are pooled by: NCCL's tuner sees the collective, the bytes and the communicator,
// never the data type, the reduction or whether a CUDA graph launched it.
struct SeriesKey {
  nccl::Operation operation;
  Scale scale;
  std::string candidate;
  auto operator<=>(const SeriesKey&) const = default;
};
struct SeriesKind {
  std::string type, redop;
  bool graph = false;
  std::string test;  // the first test imported for it
  std::string text() const {
    return type + (redop.empty() || redop == "none" ? "" : " " + redop) + (graph ? " with CUDA graphs" : "");
  }
};

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

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string version_from_code(int code) {
  auto v = nccl::Version::from_code(code);
  return v ? v->text() : "";
}

}  // namespace

Candidate imported_candidate(const NcclTestsLog& log, const ImportOptions& options,
                             std::vector<std::string>* warnings) {
  Candidate from_log;
  bool log_says = false;
  if (log.forced) {  // bench's header: exactly what it forced, "default" included
    auto forced = runners::parse_candidate(*log.forced);
    if (!forced)
      throw InputError(
          log.file, log.first_line,
          "expected a candidate after 'forced' (default, ring/simple, ...), found '" + *log.forced + "'");
    from_log = *forced;
    log_says = true;
  }
  if (log.env_algo)
    from_log.algorithm = single_choice<nccl::Algorithm>(*log.env_algo, log.collective, nccl::parse_algorithm,
                                                        log, "NCCL_ALGO");
  if (log.env_proto)
    from_log.protocol = single_choice<nccl::Protocol>(*log.env_proto, log.collective, nccl::parse_protocol,
                                                      log, "NCCL_PROTO");
  log_says |= !from_log.is_default();
  bool options_say = options.as_default || options.algorithm || options.protocol;
  Candidate c = from_log;
  if (options_say) {
    Candidate asked;
    if (!options.as_default) {
      asked.algorithm = options.algorithm;
      asked.protocol = options.protocol;
    }
    if (log_says && asked != from_log && warnings)
      warnings->push_back(log.name() + ": the log says it ran " + to_string(from_log) + "; imported as " +
                          to_string(asked) + " as the options say");
    c = asked;
  } else if (!log_says) {
    throw InputError(log.file, 0,
                     "the log does not say what NCCL was forced to (no 'NCCL_ALGO set by environment' line): "
                     "give --algo A --proto P, or --default when it ran NCCL's own choice");
  }
  if (!options.as_default && options.channels > 0) c.channels = options.channels;
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

namespace {

// The communicator a test ran on: options first (with a warning where the log says otherwise), then what the
// log states, its NCCL nNodes line, its hosts.
Scale imported_scale(const NcclTestsLog& log, const ImportOptions& options,
                     std::vector<std::string>& warnings) {
  Scale scale;
  const int shown_ranks = log.ranks();
  if (options.ranks) {
    scale.ranks = *options.ranks;
    if (shown_ranks > 0 && shown_ranks != *options.ranks)
      warnings.push_back(log.name() + ": the log shows " + std::to_string(shown_ranks) +
                         " ranks; imported as " + std::to_string(*options.ranks) + " as --ranks says");
  } else if (shown_ranks > 0) {
    scale.ranks = shown_ranks;
  } else {
    throw InputError(
        log.file, log.first_line,
        "the log does not show how many ranks ran (no '# Rank' lines, as in a table alone): give "
        "--ranks R");
  }
  const int shown_nodes = log.stated_nodes.value_or(log.nccl_nodes.value_or(log.hosts()));
  if (options.nodes) {
    scale.nodes = *options.nodes;
    if (shown_nodes > 0 && shown_nodes != *options.nodes)
      warnings.push_back(log.name() + ": the log shows " + std::to_string(shown_nodes) +
                         " nodes; imported as " + std::to_string(*options.nodes) + " as --nodes says");
  } else if (shown_nodes > 0) {
    scale.nodes = shown_nodes;
  } else {
    throw InputError(log.file, log.first_line,
                     "the log does not show how many nodes it ran on: give --nodes N");
  }
  if (scale.nodes < 1 || scale.nodes > scale.ranks)
    throw InputError(log.file, log.first_line,
                     "expected between 1 and " + std::to_string(scale.ranks) + " nodes for " +
                         std::to_string(scale.ranks) + " ranks, found " + std::to_string(scale.nodes));
  return scale;
}

// nccl-tests prints busbw = algbw x the collective's factor for its rank count: a published pair that does
// not fit the ranks imported says the rank count (an option, or a log cut and pasted) is wrong.
void check_published_busbw(const NcclTestsLog& log, nccl::Operation coll, int ranks,
                           std::vector<std::string>& warnings) {
  const NcclTestsRow* best = nullptr;
  for (const auto& row : log.rows)
    if (!best || row.out_of_place.algbw_gbps > best->out_of_place.algbw_gbps) best = &row;
  if (!best || !(best->out_of_place.algbw_gbps >= 1.0)) return;  // too few digits printed to tell
  const NcclTestsResult& h = best->out_of_place;
  const double factor = busbw_gbps(coll, ranks, 1000, 1.0) / algbw_gbps(1000, 1.0);
  // Both values are printed with two decimals (or three significant digits when large).
  const double tolerance = 0.011 * (1 + factor) + 0.002 * h.busbw_gbps;
  if (std::abs(h.busbw_gbps - h.algbw_gbps * factor) > tolerance)
    warnings.push_back(where(log, best->line) + ": the printed busbw " + fmt_number(h.busbw_gbps) +
                       " is not algbw " + fmt_number(h.algbw_gbps) + " x " + fmt_number(factor) + " (" +
                       log.collective + " on " + std::to_string(ranks) +
                       " ranks): the log ran on another rank count than imported");
}

std::string runner_text(const NcclTestsLog& log) {
  const std::string file = std::filesystem::path(log.file).filename().string();
  std::string tool =
      log.forced ? "nccl-autotune bench"
                 : "nccl-tests" + (log.header.tests_version.empty() ? "" : " " + log.header.tests_version);
  return tool + " " + (log.header.program.empty() ? log.collective : log.header.program) +
         (log.header.graph > 0 ? " with CUDA graphs" : "") + " (" + file + ":" +
         std::to_string(log.first_line) + ")";
}

void note_header(JournalHeader& h, const NcclTestsLog& log, const Scale& scale) {
  if (h.cluster.empty() && !log.header.ranks.empty()) h.cluster = log.header.ranks.front().host;
  if (h.gpu_model.empty() && !log.header.ranks.empty()) h.gpu_model = log.header.ranks.front().gpu_name;
  if (h.nccl_version.empty())
    h.nccl_version = log.nccl_version.empty() ? version_from_code(log.header.nccl_library) : log.nccl_version;
  if (h.nodes == 0 || scale.ranks > h.nodes * std::max(h.gpus_per_node, 1)) {
    h.nodes = scale.nodes;
    h.gpus_per_node = scale.ranks / scale.nodes;
  }
  if (h.runner.empty()) h.runner = runner_text(log);
}

JournalRecord make_record(const NcclTestsLog& log, const NcclTestsRow& row, nccl::Operation coll,
                          const Scale& scale, const Candidate& candidate, const ImportOptions& options) {
  JournalRecord r;
  r.setting = ProcessSetting{"default", {}};
  r.scale = scale;
  // A table from the model (bench --simulate, or bench on the stand-in NCCL) stays labelled as such.
  r.source = log.source == "simulated" || log.source == "standin" ? log.source : "imported";
  r.runner = runner_text(log);
  r.time = options.time;
  r.published_busbw_gbps = {row.out_of_place.busbw_gbps, row.in_place.busbw_gbps};
  runners::Measurement& m = r.measurement;
  m.request.set_operation(coll);
  m.request.bytes = row.bytes;
  m.request.candidate = candidate;
  // Each half of a row is one timed loop of `iters` operations: two repetitions.
  m.request.repetitions = 2;
  m.times_us = {row.out_of_place.time_us, row.in_place.time_us};
  m.mean_times_us = m.times_us;
  const double median = m.median_us();
  m.algbw_gbps = algbw_gbps(row.bytes, median);
  m.busbw_gbps = busbw_gbps(coll, scale.ranks, row.bytes, median);
  // bench's column: what NCCL ran (the out-of-place half's, where the halves differ).
  if (auto used = runners::parse_candidate(row.used.substr(0, row.used.find('|')))) {
    m.used_algorithm = used->algorithm;
    m.used_protocol = used->protocol;
    m.used_channels = used->channels;
  }
  if (row.wrong()) {
    m.outcome = runners::Outcome::wrong_result;
    auto count = [](const NcclTestsResult& x) { return x.check ? fmt_number(*x.check) : std::string("N/A"); };
    m.detail = where(log, row.line) + ": nccl-tests found wrong results (" +
               (log.header.old_error_column ? "error " : "#wrong ") + count(row.out_of_place) +
               " out-of-place, " + count(row.in_place) + " in-place)";
  }
  return r;
}

JournalHeader imported_header(const ImportOptions& options) {
  JournalHeader h;
  h.created = options.time;
  h.command = options.command;
  h.source = "imported";
  h.strategy = "imported";
  h.fingerprint = options.fingerprint;
  h.cluster = options.cluster;
  h.settings = {ProcessSetting{"default", {}}};
  return h;
}

// Nothing imported is an input error that says why, test by test.
void refuse_if_empty(const ImportResult& out) {
  if (!out.records.empty()) return;
  std::string why;
  for (const auto& n : out.not_imported) why += (why.empty() ? "" : "; ") + n.test + ": " + n.reason;
  for (const auto& w : out.warnings) why += (why.empty() ? "" : "; ") + w;
  throw InputError("no nccl-tests row could be imported" + (why.empty() ? std::string() : " (" + why + ")"));
}

}  // namespace

ImportResult import_nccl_tests(std::span<const NcclTestsFile> files, const ImportOptions& options) {
  ImportResult out;
  JournalHeader& h = out.header;
  h = imported_header(options);
  std::set<Collective> collectives;
  std::set<Scale> scales;
  std::map<SeriesKey, SeriesKind> series;
  // Identical requests count up, as the journal's `attempt` asks: how many of each so far (a map, not a scan
  // of every record before: a log at scale holds hundreds of thousands).
  std::map<std::tuple<Scale, nccl::Operation, uint64_t, std::string>, int> attempts;
  uint64_t min_bytes = UINT64_MAX, max_bytes = 0;

  for (const NcclTestsFile& file : files) {
    out.tests += static_cast<int>(file.tests.size() + file.unreadable.size());
    for (const auto& u : file.unreadable) out.not_imported.push_back({u.where, "not readable: " + u.reason});
    for (const NcclTestsLog& log : file.tests) {
      for (const auto& w : log.warnings) out.warnings.push_back(where(log, w.line) + ": " + w.text);
      auto coll = log.operation();
      if (!coll) {
        out.not_imported.push_back({log.name(), "not an operation nccl-autotune knows: " + log.collective});
        continue;
      }
      // A point-to-point test is kept as a measurement of its operation (for settings and baselines); nothing
      // was forced for it and no rule can come of it.
      Candidate candidate =
          nccl::is_point_to_point(*coll) ? Candidate{} : imported_candidate(log, options, &out.warnings);
      Scale scale = imported_scale(log, options, out.warnings);
      check_published_busbw(log, *coll, scale.ranks, out.warnings);
      // A test run with several data types (-d all) measures each size once per type: the first type is
      // imported, as is the first type of each collective, scale and candidate across tests.
      const NcclTestsRow& first = log.rows.front();
      SeriesKind kind{first.type, first.redop, log.header.graph > 0, log.name()};
      const std::string candidate_text = to_string(candidate);
      auto [it, fresh] = series.try_emplace(SeriesKey{*coll, scale, candidate_text}, kind);
      if (!fresh && (it->second.type != kind.type || it->second.redop != kind.redop ||
                     it->second.graph != kind.graph)) {
        out.not_imported.push_back({log.name(), "ran " + kind.text() + " where " + it->second.test + " ran " +
                                                    it->second.text() + " for the same " + log.collective +
                                                    ", scale and candidate (not pooled)"});
        continue;
      }
      if (log.source == "simulated" || log.source == "standin")
        out.warnings.push_back(log.name() + ": a " + log.source + " table (nccl-autotune bench " +
                               (log.source == "simulated" ? "--simulate" : "on the stand-in NCCL") +
                               "): imported as " + log.source);
      size_t other_types = 0, imported = 0;
      for (const NcclTestsRow& row : log.rows) {
        if (row.type != first.type || row.redop != first.redop) {
          ++other_types;
          continue;
        }
        JournalRecord r = make_record(log, row, *coll, scale, candidate, options);
        r.attempt += attempts[{scale, *coll, row.bytes, candidate_text}]++;
        min_bytes = std::min(min_bytes, row.bytes);
        max_bytes = std::max(max_bytes, row.bytes);
        if (r.source == "simulated" || r.source == "standin") h.source = r.source;
        out.records.push_back(std::move(r));
        ++imported;
      }
      if (other_types > 0)
        out.warnings.push_back(log.name() + ": " + std::to_string(other_types) +
                               " rows of other data types or operations than the first (" + kind.text() +
                               ") not imported");
      if (imported == 0) continue;
      ++out.tests_imported;
      scales.insert(scale);
      if (auto c = nccl::as_collective(*coll)) collectives.insert(*c);
      note_header(h, log, scale);
    }
  }
  refuse_if_empty(out);
  h.collectives.assign(collectives.begin(), collectives.end());
  h.scales.assign(scales.begin(), scales.end());
  h.min_bytes = min_bytes;
  h.max_bytes = max_bytes;
  h.repetitions = 2;
  return out;
}

}  // namespace autotune::nccl_tests
