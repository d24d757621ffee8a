#pragma once
// The Prometheus text exposition format (version 0.0.4), as node exporter's text-file collector reads it:
// per family a `# HELP` and a `# TYPE` line, then its samples, `name{label="value",...} value`. Names are
// checked against Prometheus' grammar and label values escaped (backslash, double quote, line feed), so a
// cluster or node name from a file cannot break the output. Pure functions: thread-safe.

#include <string>
#include <utility>
#include <vector>

namespace autotune::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Labels labels;
  double value = 0.0;
};

struct Family {
  std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*, with the unit in it (_seconds, _bytes, _total)
  std::string help;  // one line
  std::string type;  // "gauge" or "counter"
  std::vector<Sample> samples;
};

// Throws std::logic_error for a name, label name or type outside the grammar, or two samples of one family
// with the same labels (a programming error: the families are made by this module). Families without
// samples are left out.
std::string format_exposition(const std::vector<Family>& families);

// A label value as the format escapes it (without the quotes).
std::string escape_label_value(const std::string& value);

}  // namespace autotune::metrics
