#include "search/journal.hpp"

#include <algorithm>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/utc_time.hpp"

namespace autotune::search {

using runners::Measurement;
using runners::Outcome;
using runners::ProcessSetting;
using runners::Scale;
namespace {

using nlohmann::json;

json candidate_json(const runners::Candidate& c) {
  json j;
  j["algorithm"] = c.algorithm ? json(std::string(nccl::name(*c.algorithm))) : json(nullptr);
  j["protocol"] = c.protocol ? json(std::string(nccl::name(*c.protocol))) : json(nullptr);
  j["channels"] = c.channels;
  return j;
}

json setting_json(const ProcessSetting& s) {
  return json{{"id", s.id}, {"env", s.env}};
}

json scale_json(const Scale& s) {
  return json{{"nodes", s.nodes}, {"ranks", s.ranks}};
}

// Field access that turns a missing or mistyped field into an InputError with the journal's file and line.
class Fields {
 public:
  Fields(const json& j, const std::string& file, int line) : j_(j), file_(file), line_(line) {}

  const json& need(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) fail(std::string("expected field \"") + key + "\", found none");
    return *it;
  }
  template <typename T>
  T get(const char* key) const {
    return convert<T>(need(key), key);
  }
  template <typename T>
  T get_or(const char* key, T fallback) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return fallback;
    return convert<T>(*it, key);
  }
  template <typename T>
  T convert(const json& v, const char* key) const {
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      fail(std::string("field \"") + key + "\" has the wrong type: " + v.dump());
    }
  }
  Fields sub(const char* key) const {
    const json& v = need(key);
    if (!v.is_object())
      fail(std::string("expected field \"") + key + "\" to be an object, found " + v.dump());
    return Fields(v, file_, line_);
  }
  // An object inside an array field, checked, with the same file and line for messages.
  Fields element(const char* key, const json& v) const {
    if (!v.is_object()) fail(std::string("field \"") + key + "\": expected objects, found " + v.dump());
    return Fields(v, file_, line_);
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(file_, line_, what); }
  const json& raw() const { return j_; }

 private:
  const json& j_;
  const std::string& file_;
  int line_;
};

nccl::Collective parse_collective_field(const Fields& f, const char* key) {
  auto text = f.get<std::string>(key);
  auto c = nccl::parse_collective(text);
  if (!c) f.fail(std::string("field \"") + key + "\": expected a collective name, found \"" + text + "\"");
  return *c;
}

// A point-to-point record names its "operation" ("alltoall"); a collective's, old and new, its "collective".
void parse_operation_fields(const Fields& f, runners::MeasureRequest& request) {
  if (!f.raw().contains("operation")) {
    request.collective = parse_collective_field(f, "collective");
    return;
  }
  auto text = f.get<std::string>("operation");
  auto op = nccl::parse_operation(text);
  if (!op) f.fail("field \"operation\": expected an operation name, found \"" + text + "\"");
  request.set_operation(*op);
}

std::optional<nccl::Algorithm> parse_algorithm_field(const Fields& f, const char* key) {
  auto it = f.raw().find(key);
  if (it == f.raw().end() || it->is_null()) return std::nullopt;
  auto text = f.convert<std::string>(*it, key);
  auto a = nccl::parse_algorithm(text);
  if (!a) f.fail(std::string("field \"") + key + "\": expected an algorithm name, found \"" + text + "\"");
  return a;
}

std::optional<nccl::Protocol> parse_protocol_field(const Fields& f, const char* key) {
  auto it = f.raw().find(key);
  if (it == f.raw().end() || it->is_null()) return std::nullopt;
  auto text = f.convert<std::string>(*it, key);
  auto p = nccl::parse_protocol(text);
  if (!p) f.fail(std::string("field \"") + key + "\": expected a protocol name, found \"" + text + "\"");
  return p;
}

constexpr int kMaxRanks = 1 << 20;
constexpr double kMaxTimeUs = 1e9;     // a collective of over 16 minutes is no measurement
constexpr double kMaxBandwidth = 1e6;  // GB/s, far above any fabric

std::optional<std::string> scale_problem(const Scale& s) {
  if (s.nodes < 1 || s.ranks < s.nodes || s.ranks > kMaxRanks)
    return "expected a scale with 1 <= nodes <= ranks <= " + std::to_string(kMaxRanks) + ", found nodes " +
           std::to_string(s.nodes) + ", ranks " + std::to_string(s.ranks);
  return std::nullopt;
}

std::string number_text(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::optional<std::string> numbers_problem(const char* key, const std::vector<double>& values, double max) {
  for (double v : values)
    if (!std::isfinite(v) || v < 0.0 || v > max)
      return std::string("field \"") + key + "\": expected numbers 0.." + number_text(max) + ", found " +
             number_text(v);
  return std::nullopt;
}

ProcessSetting parse_setting(const Fields& f) {
  ProcessSetting s;
  s.id = f.get<std::string>("id");
  s.env = f.get_or<std::map<std::string, std::string>>("env", {});
  return s;
}

Scale parse_scale(const Fields& f) {
  Scale s;
  s.nodes = f.get<int>("nodes");
  s.ranks = f.get<int>("ranks");
  if (auto problem = scale_problem(s)) f.fail(*problem);
  return s;
}

Outcome parse_outcome(const Fields& f) {
  auto text = f.get<std::string>("outcome");
  for (Outcome o :
       {Outcome::ok, Outcome::unsupported, Outcome::wrong_result, Outcome::timed_out, Outcome::failed})
    if (name(o) == text) return o;
  f.fail("field \"outcome\": expected ok, unsupported, wrong_result, timed_out or failed, found \"" + text +
         "\"");
}

// "layout": {"parallelism": "tp=2,ep=8,pp=2", "groups": [{"kind", "nodes", "ranks", "groups",
// "operations"}]}, each group checked as the profile checks it.
profiles::JobLayout parse_layout(const Fields& f) {
  profiles::JobLayout l;
  l.parallelism = f.get<std::string>("parallelism");
  for (const auto& item : f.need("groups")) {
    const Fields g = f.element("groups", item);
    profiles::LayoutGroup group{
        g.get<std::string>("kind"), g.get<int>("nodes"), g.get<int>("ranks"), g.get<int>("groups"), {}};
    for (const auto& op : g.get<std::vector<std::string>>("operations")) {
      auto parsed = nccl::parse_operation(op);
      if (!parsed) f.fail("field \"layout\": expected operation names, found \"" + op + "\"");
      group.operations.push_back(*parsed);
    }
    if (auto problem = profiles::layout_problem(group)) f.fail("field \"layout\": " + *problem);
    l.groups.push_back(std::move(group));
  }
  return l;
}

json layout_json(const profiles::JobLayout& l) {
  json groups = json::array();
  for (const auto& g : l.groups) {
    std::vector<std::string> ops;
    for (auto op : g.operations) ops.emplace_back(nccl::name(op));
    groups.push_back({{"kind", g.kind},
                      {"nodes", g.nodes},
                      {"ranks", g.ranks},
                      {"groups", g.groups},
                      {"operations", ops}});
  }
  return {{"parallelism", l.parallelism}, {"groups", groups}};
}

JournalHeader parse_header(const Fields& f) {
  JournalHeader h;
  h.version = f.get<int>("version");
  if (h.version > kJournalVersion)
    f.fail("journal version " + std::to_string(h.version) + " is newer than this tool reads (" +
           std::to_string(kJournalVersion) + ")");
  h.created = f.get_or<std::string>("created", "");
  h.tool_version = f.get_or<std::string>("tool_version", "");
  h.command = f.get_or<std::string>("command", "");
  h.source = f.get<std::string>("source");
  h.runner = f.get_or<std::string>("runner", "");
  h.nccl_version = f.get_or<std::string>("nccl_version", "");
  h.cluster = f.get_or<std::string>("cluster", "");
  h.fingerprint = f.get_or<std::string>("fingerprint", "");
  h.fingerprint_facts = f.get_or<std::vector<std::string>>("fingerprint_facts", {});
  h.gpu_model = f.get_or<std::string>("gpu_model", "");
  h.nodes = f.get_or<int>("nodes", 0);
  h.gpus_per_node = f.get_or<int>("gpus_per_node", 0);
  h.nics_per_node = f.get_or<int>("nics_per_node", 0);
  h.strategy = f.get_or<std::string>("strategy", "");
  if (f.raw().contains("collectives")) {
    for (const auto& c : f.need("collectives")) {
      auto parsed = c.is_string() ? nccl::parse_collective(c.get<std::string>()) : std::nullopt;
      if (!parsed) f.fail("field \"collectives\": expected collective names, found " + c.dump());
      h.collectives.push_back(*parsed);
    }
  }
  h.min_bytes = f.get_or<uint64_t>("min_bytes", 0);
  h.max_bytes = f.get_or<uint64_t>("max_bytes", 0);
  h.channels = f.get_or<std::vector<int>>("channels", {});
  if (f.raw().contains("scales"))
    for (const auto& s : f.need("scales")) h.scales.push_back(parse_scale(f.element("scales", s)));
  if (f.raw().contains("settings"))
    for (const auto& s : f.need("settings")) h.settings.push_back(parse_setting(f.element("settings", s)));
  h.seed = f.get_or<uint64_t>("seed", 0);
  h.repetitions = f.get_or<int>("repetitions", 0);
  h.health = f.get_or<std::string>("health", "");
  h.excluded_nodes = f.get_or<std::vector<std::string>>("excluded_nodes", {});
  h.health_findings = f.get_or<std::vector<std::string>>("health_findings", {});
  h.fabric_env = f.get_or<std::map<std::string, std::string>>("fabric_env", {});
  h.hosts = f.get_or<std::vector<std::string>>("hosts", {});
  if (f.raw().contains("layout")) h.layout = parse_layout(f.sub("layout"));
  return h;
}

JournalRecord parse_record(const Fields& f) {
  JournalRecord r;
  r.setting = parse_setting(f.sub("job"));
  r.scale = parse_scale(f.sub("scale"));
  r.attempt = f.get_or<int>("attempt", 0);
  Measurement& m = r.measurement;
  parse_operation_fields(f, m.request);
  m.request.bytes = f.get<uint64_t>("bytes");
  Fields cand = f.sub("candidate");
  m.request.candidate.algorithm = parse_algorithm_field(cand, "algorithm");
  m.request.candidate.protocol = parse_protocol_field(cand, "protocol");
  m.request.candidate.channels = cand.get_or<int>("channels", 0);
  m.request.repetitions = f.get_or<int>("repetitions", 0);
  m.outcome = parse_outcome(f);
  m.detail = f.get_or<std::string>("detail", "");
  m.times_us = f.get_or<std::vector<double>>("times_us", {});
  m.mean_times_us = f.get_or<std::vector<double>>("mean_times_us", {});
  m.group_times_us = f.get_or<std::vector<double>>("group_times_us", {});
  m.algbw_gbps = f.get_or<double>("algbw_gbps", 0.0);
  m.busbw_gbps = f.get_or<double>("busbw_gbps", 0.0);
  if (f.raw().contains("used") && f.raw()["used"].is_object()) {
    Fields used = f.sub("used");
    m.used_algorithm = parse_algorithm_field(used, "algorithm");
    m.used_protocol = parse_protocol_field(used, "protocol");
    m.used_channels = used.get_or<int>("channels", 0);
  }
  r.published_busbw_gbps = f.get_or<std::vector<double>>("published_busbw_gbps", {});
  r.source = f.get<std::string>("source");
  r.runner = f.get_or<std::string>("runner", "");
  r.time = f.get_or<std::string>("time", "");
  r.learn_id = f.get_or<std::string>("learn", "");
  r.measured_under = f.get_or<std::string>("measured_under", "");
  r.nodes_used = f.get_or<std::string>("nodes_used", "");
  if (auto problem = record_problem(r)) f.fail(*problem);
  return r;
}

JournalJobEvent parse_job_event(const Fields& f) {
  JournalJobEvent e;
  e.job = f.get<std::string>("job");
  e.status = f.get<std::string>("status");
  e.detail = f.get_or<std::string>("detail", "");
  e.time = f.get_or<std::string>("time", "");
  return e;
}

}  // namespace

std::optional<std::string> record_problem(const JournalRecord& r) {
  if (auto p = scale_problem(r.scale)) return p;
  const Measurement& m = r.measurement;
  const int channels = m.request.candidate.channels;
  if (channels < 0 || channels > nccl::kMaxChannels || m.used_channels < 0 ||
      m.used_channels > nccl::kMaxChannels)
    return "expected channels 0.." + std::to_string(nccl::kMaxChannels) + ", found " +
           std::to_string(channels < 0 || channels > nccl::kMaxChannels ? channels : m.used_channels);
  if (m.request.point_to_point && !m.request.candidate.is_default())
    return "expected no forced candidate for " + std::string(nccl::name(*m.request.point_to_point)) +
           " (NCCL's tuner never sees point-to-point), found " + to_string(m.request.candidate);
  if (m.request.repetitions < 0 || r.attempt < 0)
    return "expected repetitions and attempt of at least 0, found " + std::to_string(m.request.repetitions) +
           " and " + std::to_string(r.attempt);
  if (auto p = numbers_problem("times_us", m.times_us, kMaxTimeUs)) return p;
  if (auto p = numbers_problem("mean_times_us", m.mean_times_us, kMaxTimeUs)) return p;
  if (auto p = numbers_problem("group_times_us", m.group_times_us, kMaxTimeUs)) return p;
  if (auto p = numbers_problem("busbw_gbps", {m.algbw_gbps, m.busbw_gbps}, kMaxBandwidth)) return p;
  if (auto p = numbers_problem("published_busbw_gbps", r.published_busbw_gbps, kMaxBandwidth)) return p;
  if (r.source.empty()) return std::string("field \"source\": expected the record's source, found none");
  return std::nullopt;
}

namespace {

// "2026-11-30T04:37:15Z" -> "20261130T043715Z"; the file's modification time when the header has none.
std::string journal_time(const std::filesystem::path& journal) {
  std::string created;
  try {
    std::ifstream in(journal);
    std::string first;
    if (std::getline(in, first))
      if (auto e = parse_journal_line(first, journal.string(), 1); e && e->header())
        created = e->header()->created;
  } catch (const std::exception&) {
    // not a journal we can read: its time is the file's
  }
  auto compact = [](const std::string& time) {
    std::string out;
    for (char c : time)
      if (c != '-' && c != ':') out += c;
    return out;
  };
  if (std::string c = compact(created); c.size() >= 16) return c;
  struct stat st {};
  return compact(utc_timestamp(::stat(journal.c_str(), &st) == 0 ? st.st_mtime : 0));
}

std::string stem_of(const std::filesystem::path& journal) {
  std::string stem = journal.filename().string();
  const std::string ext = ".jsonl";
  if (stem.size() > ext.size() && stem.ends_with(ext)) stem.resize(stem.size() - ext.size());
  return stem;
}

}  // namespace

std::filesystem::path journal_parts_dir(const std::filesystem::path& journal) {
  return journal.parent_path() / (stem_of(journal) + ".parts");
}

std::string KeptJournal::describe() const {
  std::string out = "the previous calibration's ";
  if (!journal.empty()) out += "journal is kept as " + journal.string();
  if (!parts.empty()) out += std::string(journal.empty() ? "" : ", its ") + "job parts as " + parts.string();
  return out + " (--resume would have continued it)";
}

std::optional<KeptJournal> keep_previous_journal(const std::filesystem::path& journal) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parts = journal_parts_dir(journal);
  const bool has_journal = fs::exists(journal, ec), has_parts = fs::exists(parts, ec);
  if (has_journal && fs::file_size(journal, ec) == 0 && !ec && !has_parts) {
    fs::remove(journal);
    return std::nullopt;
  }
  if (!has_journal && !has_parts) return std::nullopt;
  const std::string time = has_journal ? journal_time(journal) : journal_time(parts);
  const fs::path dir = journal.parent_path();
  const std::string stem = stem_of(journal);
  std::string tag = time;
  for (int n = 2; fs::exists(dir / (stem + "." + tag + ".jsonl"), ec) ||
                  fs::exists(dir / (stem + "." + tag + ".parts"), ec);
       ++n)
    tag = time + "-" + std::to_string(n);
  KeptJournal kept;
  if (has_journal) fs::rename(journal, kept.journal = dir / (stem + "." + tag + ".jsonl"));
  if (has_parts) fs::rename(parts, kept.parts = dir / (stem + "." + tag + ".parts"));
  return kept;
}

RunLock lock_journal(const std::filesystem::path& journal, const std::string& what) {
  if (journal.has_parent_path()) std::filesystem::create_directories(journal.parent_path());
  return RunLock::acquire(journal.string() + ".lock", what);
}

std::string to_json_line(const JournalHeader& h) {
  json j;
  j["type"] = "header";
  j["format"] = kJournalFormat;
  j["version"] = h.version;
  j["created"] = h.created;
  j["tool_version"] = h.tool_version;
  j["command"] = h.command;
  j["source"] = h.source;
  j["runner"] = h.runner;
  j["nccl_version"] = h.nccl_version;
  j["cluster"] = h.cluster;
  j["fingerprint"] = h.fingerprint;
  if (!h.fingerprint_facts.empty()) j["fingerprint_facts"] = h.fingerprint_facts;
  j["gpu_model"] = h.gpu_model;
  j["nodes"] = h.nodes;
  j["gpus_per_node"] = h.gpus_per_node;
  j["nics_per_node"] = h.nics_per_node;
  j["strategy"] = h.strategy;
  json collectives = json::array();
  for (auto c : h.collectives) collectives.push_back(std::string(nccl::name(c)));
  j["collectives"] = collectives;
  j["min_bytes"] = h.min_bytes;
  j["max_bytes"] = h.max_bytes;
  j["channels"] = h.channels;
  json scales = json::array();
  for (const auto& s : h.scales) scales.push_back(scale_json(s));
  j["scales"] = scales;
  json settings = json::array();
  for (const auto& s : h.settings) settings.push_back(setting_json(s));
  j["settings"] = settings;
  j["seed"] = h.seed;
  j["repetitions"] = h.repetitions;
  if (!h.health.empty()) j["health"] = h.health;
  if (!h.excluded_nodes.empty()) j["excluded_nodes"] = h.excluded_nodes;
  if (!h.health_findings.empty()) j["health_findings"] = h.health_findings;
  if (!h.fabric_env.empty()) j["fabric_env"] = h.fabric_env;
  if (!h.hosts.empty()) j["hosts"] = h.hosts;
  if (h.layout) j["layout"] = layout_json(*h.layout);
  return j.dump();
}

std::string to_json_line(const JournalRecord& r) {
  const Measurement& m = r.measurement;
  json j;
  j["type"] = "measurement";
  j["job"] = setting_json(r.setting);
  j["scale"] = scale_json(r.scale);
  j["attempt"] = r.attempt;
  if (m.request.point_to_point)
    j["operation"] = std::string(nccl::name(*m.request.point_to_point));
  else
    j["collective"] = std::string(nccl::name(m.request.collective));
  j["bytes"] = m.request.bytes;
  j["candidate"] = candidate_json(m.request.candidate);
  j["repetitions"] = m.request.repetitions;
  j["outcome"] = std::string(name(m.outcome));
  j["detail"] = m.detail;
  j["times_us"] = m.times_us;
  j["mean_times_us"] = m.mean_times_us;
  j["median_us"] = m.median_us();
  j["algbw_gbps"] = m.algbw_gbps;
  j["busbw_gbps"] = m.busbw_gbps;
  json used;
  used["algorithm"] = m.used_algorithm ? json(std::string(nccl::name(*m.used_algorithm))) : json(nullptr);
  used["protocol"] = m.used_protocol ? json(std::string(nccl::name(*m.used_protocol))) : json(nullptr);
  used["channels"] = m.used_channels;
  j["used"] = used;
  if (!r.published_busbw_gbps.empty()) j["published_busbw_gbps"] = r.published_busbw_gbps;
  j["source"] = r.source;
  j["runner"] = r.runner;
  j["time"] = r.time;
  if (!r.learn_id.empty()) j["learn"] = r.learn_id;
  if (!r.measured_under.empty()) j["measured_under"] = r.measured_under;
  if (!r.nodes_used.empty()) j["nodes_used"] = r.nodes_used;
  // One group's time says nothing beside median_us: only several groups measured at once show a straggler.
  if (m.group_times_us.size() >= 2) j["group_times_us"] = m.group_times_us;
  return j.dump();
}

std::string to_json_line(const JournalJobEvent& e) {
  json j;
  j["type"] = "job";
  j["job"] = e.job;
  j["status"] = e.status;
  j["detail"] = e.detail;
  j["time"] = e.time;
  return j.dump();
}

std::optional<JournalEntry> parse_journal_line(std::string_view text, const std::string& file, int line) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e400
    throw InputError(file, line,
                     std::string("expected one JSON object per line, found invalid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw InputError(file, line, "expected a JSON object, found " + j.dump());
  Fields f(j, file, line);
  auto type = f.get<std::string>("type");
  JournalEntry entry;
  entry.line = line;
  if (type == "header") {
    if (f.get<std::string>("format") != kJournalFormat)
      f.fail("expected format \"" + std::string(kJournalFormat) + "\", found " + j["format"].dump());
    entry.value = parse_header(f);
  } else if (type == "measurement") {
    entry.value = parse_record(f);
  } else if (type == "job") {
    entry.value = parse_job_event(f);
  } else {
    return std::nullopt;
  }
  return entry;
}

std::vector<JournalEntry> read_journal(const std::filesystem::path& path, std::vector<std::string>* skipped) {
  std::string content = read_file(path, kJournalInput);
  std::vector<JournalEntry> entries;
  const std::string file = path.string();
  size_t pos = 0;
  int line = 0;
  bool first = true;
  while (pos < content.size()) {
    size_t end = content.find('\n', pos);
    bool complete = end != std::string::npos;
    std::string_view text(content.data() + pos, (complete ? end : content.size()) - pos);
    pos = complete ? end + 1 : content.size();
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const bool is_first = std::exchange(first, false);
    try {
      if (auto entry = parse_journal_line(text, file, line)) entries.push_back(std::move(*entry));
    } catch (const InputError& e) {
      if (!complete) break;  // torn last write
      // The first line says what the file is: without it nothing after it can be trusted to be a journal.
      if (!skipped || is_first) throw;
      skipped->push_back(std::string(e.what()) + " (line skipped)");
    }
  }
  return entries;
}

JournalContents load_journal(const std::filesystem::path& path) {
  JournalContents contents;
  for (auto& e : read_journal(path, &contents.skipped)) {
    if (auto* h = std::get_if<JournalHeader>(&e.value)) {
      if (!contents.header) contents.header = std::move(*h);
    } else if (auto* r = std::get_if<JournalRecord>(&e.value)) {
      contents.records.push_back(std::move(*r));
    } else if (auto* ev = std::get_if<JournalJobEvent>(&e.value)) {
      contents.job_events.push_back(std::move(*ev));
    }
  }
  return contents;
}

JournalWriter::JournalWriter(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    // Cut a torn last line so the next line does not get glued onto it.
    std::string content = read_file(path, kJournalInput);
    if (!content.empty() && content.back() != '\n') {
      size_t keep = content.rfind('\n');
      std::filesystem::resize_file(path, keep == std::string::npos ? 0 : keep + 1);
    }
  } else if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path());
  }
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) throw std::runtime_error("cannot open journal " + path.string() + ": " + std::strerror(errno));
}

JournalWriter::~JournalWriter() {
  if (file_) {
    ::fdatasync(fileno(file_));
    std::fclose(file_);
  }
}

void JournalWriter::write_lines(const std::string& text) {
  if (text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    throw JournalWriteError("cannot write journal " + path_.string() + ": " + std::strerror(errno));
}

void JournalWriter::write(const JournalHeader& header) {
  write_lines(to_json_line(header) + "\n");
}

void JournalWriter::write(std::span<const JournalRecord> batch) {
  for (const auto& r : batch)
    if (auto problem = record_problem(r))
      throw std::invalid_argument("journal " + path_.string() +
                                  ": record refused before writing: " + *problem);
  std::string text;
  for (const auto& r : batch) text += to_json_line(r) + "\n";
  write_lines(text);
}

void JournalWriter::write(const JournalJobEvent& event) {
  write_lines(to_json_line(event) + "\n");
}

std::string node_range(const NodeSpan& span) {
  const int last = span.first + span.count - 1;
  return last == span.first ? std::to_string(span.first)
                            : std::to_string(span.first) + "-" + std::to_string(last);
}

std::optional<NodeSpan> parse_node_range(std::string_view text) {
  auto number = [](std::string_view digits) -> std::optional<int> {
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::stoi(std::string(digits));
  };
  const size_t dash = text.find('-');
  const auto first = number(text.substr(0, dash));
  const auto last = dash == std::string_view::npos ? first : number(text.substr(dash + 1));
  if (!first || !last || *last < *first) return std::nullopt;
  return NodeSpan{*first, *last - *first + 1};
}

}  // namespace autotune::search
