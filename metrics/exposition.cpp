#include "metrics/exposition.hpp"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace autotune::metrics {
namespace {

bool valid_name(const std::string& name, bool colon_allowed) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_allowed && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::string escape_help(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string label_text(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!valid_name(labels[i].first, false) || labels[i].first.starts_with("__"))
      throw std::logic_error("metrics: not a label name: " + labels[i].first);
    out += (i ? "," : "") + labels[i].first + "=\"" + escape_label_value(labels[i].second) + "\"";
  }
  return out + "}";
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_exposition(const std::vector<Family>& families) {
  std::string out;
  std::set<std::string> names;
  for (const auto& f : families) {
    if (f.samples.empty()) continue;
    if (!valid_name(f.name, true)) throw std::logic_error("metrics: not a metric name: " + f.name);
    if (f.type != "gauge" && f.type != "counter") throw std::logic_error("metrics: not a type: " + f.type);
    if (!names.insert(f.name).second) throw std::logic_error("metrics: family twice: " + f.name);
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n# TYPE " + f.name + " " + f.type + "\n";
    std::set<std::string> seen;
    for (const auto& s : f.samples) {
      const std::string labels = label_text(s.labels);
      if (!seen.insert(labels).second) throw std::logic_error("metrics: " + f.name + labels + " twice");
      out += f.name + labels + " " + format_value(s.value) + "\n";
    }
  }
  return out;
}

}  // namespace autotune::metrics
