#include "topology/dcgm_diag.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/input_error.hpp"

namespace autotune::topology {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string first_line(const std::string& text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "no output";
  std::string line = text.substr(start, text.find('\n', start) - start);
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

std::string string_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// "GPU3" from DCGM 4's entity_group / entity_id or DCGM 3's gpu_id (a number or a string); "node" when the
// result names no device.
std::string device_of(const json& result) {
  std::string group = string_of(result, "entity_group");
  if (group.empty()) group = "GPU";
  for (const char* key : {"entity_id", "gpu_id"}) {
    auto it = result.find(key);
    if (it == result.end()) continue;
    if (it->is_number_integer()) return group + std::to_string(it->get<long long>());
    if (it->is_string() && !it->get<std::string>().empty()) return group + it->get<std::string>();
  }
  return "node";
}

// DCGM's warnings: objects with a "warning" text (DCGM 3 and 4) or plain strings; "info" lines likewise.
std::string detail_of(const json& result) {
  std::string out;
  for (const char* key : {"warnings", "info"}) {
    auto it = result.find(key);
    if (it == result.end() || !it->is_array()) continue;
    for (const auto& w : *it) {
      const std::string text = w.is_string()   ? w.get<std::string>()
                               : w.is_object() ? string_of(w, "warning")
                                               : "";
      if (!text.empty()) out += (out.empty() ? "" : "; ") + text;
    }
    if (!out.empty()) break;  // warnings say why; info lines only when there are none
  }
  return out;
}

void read_tests(const json& categories, DcgmDiag& d) {
  for (const auto& category : categories) {
    if (!category.is_object()) continue;
    const std::string name = string_of(category, "category");
    auto tests = category.find("tests");
    if (tests == category.end() || !tests->is_array()) continue;
    for (const auto& test : *tests) {
      if (!test.is_object()) continue;
      const std::string test_name = (name.empty() ? "" : name + ": ") + string_of(test, "name");
      auto results = test.find("results");
      if (results == test.end() || !results->is_array()) continue;
      for (const auto& r : *results)
        if (r.is_object())
          d.results.push_back({test_name, device_of(r), lower(string_of(r, "status")), detail_of(r)});
    }
  }
}

}  // namespace

DcgmDiag parse_dcgm_diag(std::string_view output, int exit_status, int level) {
  DcgmDiag d;
  d.level = level;
  d.ran = true;
  // dcgmi may print lines before the document (deprecation notes): read from the first brace.
  const size_t brace = output.find('{');
  json j = brace == std::string_view::npos ? json() : json::parse(output.substr(brace), nullptr, false);
  const json* root = nullptr;
  if (j.is_object())
    for (const char* key : {"DCGM Diagnostic", "DCGM GPU Diagnostic"})
      if (auto it = j.find(key); it != j.end() && it->is_object()) root = &*it;
  if (!root) {
    d.why = "output of dcgmi diag (exit status " + std::to_string(exit_status) +
            ") is not DCGM's JSON: " + first_line(std::string(output));
    return d;
  }
  if (const std::string e = string_of(*root, "runtime_error"); !e.empty()) d.why = "dcgmi: " + e;
  if (auto c = root->find("test_categories"); c != root->end() && c->is_array()) read_tests(*c, d);
  if (d.results.empty() && d.why.empty())
    d.why = "dcgmi diag (exit status " + std::to_string(exit_status) + ") reported no results";
  return d;
}

DcgmDiag run_dcgm_diag(const CommandRunner& runner, int level) {
  if (level < 1 || level > 4)
    throw InputError("<arguments>", 0, "--dcgm level 1 to 4 (dcgmi diag -r), found " + std::to_string(level));
  const CommandOutput out = runner.run({"dcgmi", "diag", "-r", std::to_string(level), "-j"});
  if (!out.started) {
    DcgmDiag d;
    d.level = level;
    d.why = out.why + ": DCGM diagnostics not run";
    return d;
  }
  return parse_dcgm_diag(out.output, out.exit_status, level);
}

}  // namespace autotune::topology
