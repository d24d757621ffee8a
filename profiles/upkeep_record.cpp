#include "profiles/upkeep_record.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "profiles/store.hpp"
#include "profiles/toml_escape.hpp"

namespace autotune::profiles {
namespace {

bool known_command(const std::string& c) {
  return c == "verify" || c == "check";
}

int record_line(const toml::node& n) {
  return static_cast<int>(n.source().begin.line);
}

std::string required_string(const toml::table& t, const char* key, const std::string& file) {
  const auto* v = t.get(key);
  if (!v || !v->is_string())
    throw InputError(file, v ? record_line(*v) : 1, std::string("expected ") + key + " = \"...\"");
  return v->as_string()->get();
}

UpkeepRecord parse_record(const std::string& text, const std::string& file) {
  toml::table t;
  try {
    t = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw InputError(file, static_cast<int>(e.source().begin.line),
                     "expected an upkeep record (TOML); " + std::string(e.description()));
  }
  UpkeepRecord r;
  r.command = required_string(t, "command", file);
  if (!known_command(r.command))
    throw InputError(file, record_line(*t.get("command")), "expected command = \"verify\" or \"check\"");
  r.subject = required_string(t, "subject", file);
  r.result = required_string(t, "result", file);
  r.detail = t.get("detail") ? required_string(t, "detail", file) : "";
  const auto* time = t.get("time");
  if (!time || !time->is_integer() || time->as_integer()->get() < 0)
    throw InputError(file, time ? record_line(*time) : 1, "expected time = <unix seconds>");
  r.time = time->as_integer()->get();
  if (const auto* facts = t.get("facts")) {
    if (!facts->is_table()) throw InputError(file, record_line(*facts), "expected [facts] as a table");
    for (const auto& [k, v] : *facts->as_table()) {
      if (!v.is_string())
        throw InputError(file, record_line(v), "expected facts." + std::string(k.str()) + " as a string");
      r.facts[std::string(k.str())] = v.as_string()->get();
    }
  }
  return r;
}

}  // namespace

std::filesystem::path upkeep_record_path(const std::filesystem::path& store, const UpkeepRecord& r) {
  return store / "status" / (r.command + "-" + sanitize_file_name(r.subject) + ".toml");
}

void write_upkeep_record(const std::filesystem::path& store, const UpkeepRecord& r) {
  if (!known_command(r.command))
    throw InputError("<upkeep record>", 0, "expected command verify or check; found \"" + r.command + "\"");
  if (r.subject.empty() || r.result.empty())
    throw InputError("<upkeep record>", 0, "expected a subject and a result; found an empty one");
  for (const auto& [k, v] : r.facts)
    if (k.empty() || k.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos)
      throw InputError("<upkeep record>", 0,
                       "expected a fact named in lower case letters; found \"" + k + "\"");
  std::ostringstream out;
  out << "# The last `nccl-autotune " << r.command << "` of " << r.subject << " (read by `metrics`)\n"
      << "command = " << toml_string(r.command) << "\nsubject = " << toml_string(r.subject)
      << "\nresult = " << toml_string(r.result) << "\ntime = " << r.time
      << "\ndetail = " << toml_string(r.detail) << "\n";
  if (!r.facts.empty()) {
    out << "\n[facts]\n";
    for (const auto& [k, v] : r.facts) out << k << " = " << toml_string(v) << "\n";
  }
  std::filesystem::create_directories(store / "status");
  write_file_atomically(upkeep_record_path(store, r), out.str());
}

std::optional<UpkeepRecord> read_upkeep_record(const std::filesystem::path& store, const std::string& command,
                                               const std::string& subject) {
  UpkeepRecord key;
  key.command = command;
  key.subject = subject;
  const auto file = upkeep_record_path(store, key);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  return parse_record(read_file(file), file.string());
}

UpkeepRecords read_upkeep_records(const std::filesystem::path& store) {
  UpkeepRecords out;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(store / "status", ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".toml" && e.path().filename().string()[0] != '.')
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      out.records.push_back(parse_record(read_file(f), f.string()));
    } catch (const InputError& e) {
      out.refused.push_back(e.what());
    }
  }
  return out;
}

}  // namespace autotune::profiles
