#pragma once
// A line chart as inline SVG, for the HTML report: a log2 or linear x axis, a log10 y axis (bandwidths that
// span decades) or a linear one from zero (or around a reference line), ticks at round values
// (axis_ticks.hpp), one <path class="series"> per series (tagged data-series with its name), shaded x ranges,
// labelled axes with units, a legend. No scripts, no external resources: the SVG prints and renders in any
// browser. A pure function of its input.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace autotune::report {

struct SvgSeries {
  std::string name;
  std::string color;                              // CSS color
  bool emphasis = false;                          // drawn thicker and dashed (NCCL's default choice)
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct SvgBand {
  double x_min = 0.0;  // data coordinates, inclusive
  double x_max = 0.0;
  std::string label;  // shown at the top of the band and as its tooltip
  std::string color = "#f2c94c";
};

struct SvgChart {
  std::string title;
  std::string x_label;  // with units: "message size (bytes)"
  std::string y_label;  // "bus bandwidth (GB/s)"
  bool log_x = true;    // base-2 log axis (message sizes)
  bool log_y = false;   // base-10 log axis; points with y <= 0 are left out
  std::vector<SvgSeries> series;
  std::vector<SvgBand> bands;
  std::optional<double> reference_y;                // a horizontal line (1.0 on a speedup chart)
  std::function<std::string(double)> x_tick_label;  // default: the number
  int width = 960;
  int height = 400;
};

std::string render_svg(const SvgChart& chart);

// Escapes &, <, >, " and ' for HTML/XML text and attribute values.
std::string xml_escape(std::string_view text);

}  // namespace autotune::report
