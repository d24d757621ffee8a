#include "nccl_tests/nccl_tests_json.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "common/input_error.hpp"
#include "common/text.hpp"

namespace autotune::nccl_tests {
namespace {

using nlohmann::json;

// One document's text and where it starts.
struct Document {
  std::string_view text;
  int line = 1;
};

int line_at(std::string_view text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// Splits concatenated documents by brace depth (strings and escapes respected), so that each is parsed alone
// and errors name its own line.
std::vector<Document> split_documents(std::string_view text, const std::string& file) {
  std::vector<Document> out;
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == text.size()) break;
    if (text[pos] != '{')
      throw InputError(
          file, line_at(text, pos),
          std::string("expected a JSON object of nccl-tests' -J output, found '") + text[pos] + "'");
    int depth = 0;
    bool in_string = false, escaped = false;
    size_t end = pos;
    for (; end < text.size(); ++end) {
      char c = text[end];
      if (in_string) {
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) break;
      }
    }
    if (end == text.size())
      throw InputError(
          file, line_at(text, pos),
          "the JSON document ends before its closing brace (nccl-tests was stopped while writing "
          "it?)");
    out.push_back({text.substr(pos, end + 1 - pos), line_at(text, pos)});
    pos = end + 1;
  }
  if (out.empty()) throw InputError(file, 1, "expected nccl-tests' JSON output, found an empty file");
  return out;
}

// Typed access with errors that name the field: "expected config.ngpus to be a number, found "8"".
class Reader {
 public:
  Reader(const std::string& file, int line) : file_(file), line_(line) {}

  [[noreturn]] void fail(const std::string& path, const char* what, const json& found) const {
    std::string text = found.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    throw InputError(file_, line_, "expected " + path + " to be " + what + ", found " + text);
  }
  const json* find(const json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const json& need(const json& obj, const char* key, const std::string& path) const {
    const json* v = find(obj, key);
    if (!v) throw InputError(file_, line_, "expected a field " + path + ", found none");
    return *v;
  }
  const json& object(const json& obj, const char* key, const std::string& path) const {
    const json& v = need(obj, key, path);
    if (!v.is_object()) fail(path, "an object", v);
    return v;
  }
  const json& array(const json& obj, const char* key, const std::string& path) const {
    const json& v = need(obj, key, path);
    if (!v.is_array()) fail(path, "a list", v);
    return v;
  }
  template <typename T>
  T integer(const json& obj, const char* key, const std::string& path) const {
    const json& v = need(obj, key, path);
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<T>::max());
    constexpr auto kMin = static_cast<int64_t>(std::numeric_limits<T>::min());
    if (v.is_number_unsigned() && v.get<uint64_t>() <= kMax) return static_cast<T>(v.get<uint64_t>());
    if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() >= kMin &&
        (v.get<int64_t>() < 0 || static_cast<uint64_t>(v.get<int64_t>()) <= kMax))
      return static_cast<T>(v.get<int64_t>());
    fail(path, "a whole number in range", v);
  }
  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "a string", v);
    return v.get<std::string>();
  }
  // nccl-tests writes NaN as the string "nan".
  double number(const json& obj, const char* key, const std::string& path) const {
    const json& v = need(obj, key, path);
    if (v.is_number()) return v.get<double>();
    if (v.is_string() && v.get<std::string>() == "nan") return std::nan("");
    fail(path, "a number", v);
  }

 private:
  const std::string& file_;
  int line_;
};

void read_config(const Reader& r, const json& doc, NcclTestsLog& log) {
  NcclTestsHeader& h = log.header;
  const json& config = r.object(doc, "config", "config");
  h.threads = r.integer<int>(config, "nthreads", "config.nthreads");
  h.gpus_per_thread = r.integer<int>(config, "ngpus", "config.ngpus");
  h.min_bytes = r.integer<uint64_t>(config, "minimum_bytes", "config.minimum_bytes");
  h.max_bytes = r.integer<uint64_t>(config, "maximum_bytes", "config.maximum_bytes");
  h.step_is_factor = r.find(config, "step_factor") != nullptr;
  h.step = r.integer<uint64_t>(config, h.step_is_factor ? "step_factor" : "step_bytes",
                               h.step_is_factor ? "config.step_factor" : "config.step_bytes");
  h.warmup_iters = r.integer<int>(config, "warmup_iters", "config.warmup_iters");
  h.iters = r.integer<int>(config, "iterations", "config.iterations");
  h.validation = r.integer<int>(config, "validation", "config.validation");
  h.graph = r.integer<int>(config, "graph", "config.graph");
  const json& devices = r.array(config, "devices", "config.devices");
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string at = "config.devices[" + std::to_string(i) + "]";
    if (!devices[i].is_object()) r.fail(at, "an object", devices[i]);
    NcclTestsRank rank;
    rank.rank = r.integer<int>(devices[i], "rank", at + ".rank");
    rank.pid = r.integer<int>(devices[i], "pid", at + ".pid");
    rank.host = r.string(r.need(devices[i], "hostname", at + ".hostname"), at + ".hostname");
    rank.device = r.integer<int>(devices[i], "device", at + ".device");
    rank.bus_id = r.string(r.need(devices[i], "device_hex", at + ".device_hex"), at + ".device_hex");
    rank.gpu_name =
        trim(r.string(r.need(devices[i], "device_info", at + ".device_info"), at + ".device_info"));
    h.ranks.push_back(std::move(rank));
  }
  // nccl-tests gathers one device line per process (the first of its GPUs): every process drives
  // nthreads x ngpus ranks.
  if (!devices.empty() && h.threads > 0 && h.gpus_per_thread > 0)
    log.stated_ranks = static_cast<int>(devices.size()) * h.threads * h.gpus_per_thread;
}

NcclTestsResult read_half(const Reader& r, const json& half, const std::string& at) {
  NcclTestsResult out;
  const char* time_key = r.find(half, "cpu_time") ? "cpu_time" : "time";
  out.time_us = r.number(half, time_key, at + "." + time_key);
  out.algbw_gbps = r.number(half, "alg_bw", at + ".alg_bw");
  out.busbw_gbps = r.number(half, "bus_bw", at + ".bus_bw");
  const json& wrong = r.need(half, "nwrong", at + ".nwrong");
  if (!wrong.is_null()) {
    out.check = r.number(half, "nwrong", at + ".nwrong");
    out.wrong = *out.check > 0 || std::isnan(*out.check);
  }
  return out;
}

void read_results(const Reader& r, const json& doc, int line, NcclTestsLog& log) {
  const json& results = r.array(doc, "results", "results");
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string at = "results[" + std::to_string(i) + "]";
    const json& res = results[i];
    if (!res.is_object()) r.fail(at, "an object", res);
    NcclTestsRow row;
    row.line = line;
    row.bytes = r.integer<uint64_t>(res, "size", at + ".size");
    row.count = r.integer<uint64_t>(res, "count", at + ".count");
    row.type = r.string(r.need(res, "type", at + ".type"), at + ".type");
    row.redop = r.string(r.need(res, "redop", at + ".redop"), at + ".redop");
    const json& root = r.need(res, "root", at + ".root");  // printed "%6i" into a string
    if (root.is_number_integer()) {
      row.root = r.integer<int>(res, "root", at + ".root");
    } else {
      std::string text(trim(r.string(root, at + ".root")));
      char* end = nullptr;
      long v = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || v < -1 || v > std::numeric_limits<int>::max())
        r.fail(at + ".root", "a rank or -1", root);
      row.root = static_cast<int>(v);
    }
    const json& oop = r.need(res, "out_of_place", at + ".out_of_place");
    const json& inp = r.need(res, "in_place", at + ".in_place");
    if (oop.is_null()) {  // nccl-tests' trace replay times the in-place half only
      log.warnings.push_back(
          {line, at + " (" + std::to_string(row.bytes) + " B) has no out-of-place half: not imported"});
      continue;
    }
    if (!oop.is_object()) r.fail(at + ".out_of_place", "an object", oop);
    if (!inp.is_object()) r.fail(at + ".in_place", "an object", inp);
    row.out_of_place = read_half(r, oop, at + ".out_of_place");
    row.in_place = read_half(r, inp, at + ".in_place");
    log.rows.push_back(std::move(row));
  }
}

void read_footer(const Reader& r, const json& doc, int line, NcclTestsLog& log) {
  if (const json* oob = r.find(doc, "out_of_bounds"); oob && oob->is_object())
    log.footer.out_of_bounds = r.integer<int>(*oob, "count", "out_of_bounds.count");
  if (const json* avg = r.find(doc, "average_bus_bandwidth"); avg && avg->is_object())
    log.footer.avg_busbw_gbps = r.number(*avg, "bandwidth", "average_bus_bandwidth.bandwidth");
  if (!log.footer.out_of_bounds && !log.footer.avg_busbw_gbps) {
    log.truncated = true;
    log.warnings.push_back({line,
                            "the JSON has no out_of_bounds or average_bus_bandwidth: the run stopped before "
                            "its footer; " +
                                std::to_string(log.rows.size()) + " results kept"});
  }
  if (const json* errors = r.find(doc, "errors"); errors && errors->is_array())
    for (const json& e : *errors)
      if (e.is_string() && !e.get<std::string>().empty())
        log.warnings.push_back({line, "nccl-tests reported: " + e.get<std::string>()});
  size_t wrong = std::count_if(log.rows.begin(), log.rows.end(), [](const auto& row) { return row.wrong(); });
  if (wrong > 0)
    log.warnings.push_back(
        {line, std::to_string(wrong) + " results are wrong: kept, flagged, never used for rules"});
}

void read_program_and_env(const Reader& r, const json& doc, NcclTestsLog& log) {
  const json& args = r.array(doc, "args", "args");
  if (!args.empty())
    log.header.program = std::filesystem::path(r.string(args[0], "args[0]")).filename().string();
  if (const json* env = r.find(doc, "env"); env && env->is_array()) {
    for (const json& e : *env) {
      if (!e.is_string()) continue;
      const std::string kv = e.get<std::string>();
      if (kv.starts_with("NCCL_ALGO=")) log.env_algo = kv.substr(10);
      if (kv.starts_with("NCCL_PROTO=")) log.env_proto = kv.substr(11);
    }
  }
  log.header.nccl_library = r.integer<int>(doc, "nccl_version", "nccl_version");
}

NcclTestsLog read_document(const Document& d, const std::string& file,
                           const std::optional<std::string>& collective) {
  json doc;
  try {
    doc = json::parse(d.text);
  } catch (const json::parse_error& e) {
    throw InputError(file, d.line + line_at(d.text, std::min<size_t>(e.byte, d.text.size())) - 1,
                     std::string("expected nccl-tests' JSON output: ") + e.what());
  }
  Reader r(file, d.line);
  if (!r.find(doc, "version") || !r.find(doc, "results"))
    throw InputError(file, d.line,
                     "expected nccl-tests' JSON output (a 'version' and a 'results' field), found neither");
  int version = r.integer<int>(doc, "version", "version");
  if (version < 1 || version > 3)
    throw InputError(file, d.line,
                     "expected nccl-tests' JSON format version 1 to 3 (nccl-tests 2.18 to 2.19.6), found " +
                         std::to_string(version));
  NcclTestsLog log;
  log.file = file;
  log.first_line = d.line;
  log.last_line = d.line + static_cast<int>(std::count(d.text.begin(), d.text.end(), '\n'));
  log.header.tests_version = "JSON v" + std::to_string(version);
  read_program_and_env(r, doc, log);
  read_config(r, doc, log);
  read_results(r, doc, d.line, log);
  if (log.rows.empty()) throw InputError(file, d.line, "the nccl-tests JSON holds no result");
  read_footer(r, doc, d.line, log);
  std::optional<std::string> name =
      collective ? nccl_tests_collective_name(*collective) : nccl_tests_collective_name(log.header.program);
  if (collective && !name)
    throw InputError(
        "<arguments>", 0,
        "expected a collective (allreduce, allgather, reducescatter, broadcast, reduce, alltoall, "
        "sendrecv, gather, scatter), found '" +
            *collective + "'");
  if (!name) name = nccl_tests_collective_name(std::filesystem::path(file).filename().string());
  if (!name)
    throw InputError(file, d.line,
                     "cannot tell which collective this nccl-tests JSON measured (args[0] names no *_perf "
                     "program): name it with --collective");
  log.collective = *name;
  return log;
}

}  // namespace

bool looks_like_json(std::string_view text) {
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
  return false;
}

std::vector<NcclTestsLog> parse_nccl_tests_json(std::string_view text, const std::string& file,
                                                std::optional<std::string> collective) {
  std::vector<NcclTestsLog> out;
  for (const Document& d : split_documents(text, file)) out.push_back(read_document(d, file, collective));
  return out;
}

}  // namespace autotune::nccl_tests
