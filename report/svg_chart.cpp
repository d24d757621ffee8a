#include "report/svg_chart.hpp"

#include "report/axis_ticks.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

namespace autotune::report {
namespace {

constexpr double kLeft = 80, kRight = 230, kTop = 40, kBottom = 60;  // margins: the legend sits on the right

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string default_tick(double v) {
  return tick_label(v);
}

// The y axis: where it starts and ends and its ticks. A log axis covers the positive values; a linear one
// starts at zero, or just below the lowest value when there is a reference line (speedup around 1).
AxisTicks y_axis(const SvgChart& chart) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : chart.series)
    for (auto [x, y] : s.points) {
      if (!std::isfinite(y) || (chart.log_x && x <= 0) || (chart.log_y && y <= 0)) continue;
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
  if (chart.log_y) return std::isfinite(lo) ? log_ticks(lo, hi) : log_ticks(1, 10);
  if (!std::isfinite(hi)) lo = hi = 0;
  if (chart.reference_y) {
    lo = std::min(lo, *chart.reference_y);
    hi = std::max(hi, *chart.reference_y);
    // Room above the reference, and the axis reads best around it: below the lowest value, not from 0.
    return linear_ticks(std::max(0.0, lo - 0.05 * (hi - lo)), hi + 0.05 * (hi - lo) + 1e-9, 6);
  }
  return linear_ticks(0.0, std::max(hi, 0.0), 5);
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// Where data lands in the picture: the plot area and the two axes' ranges.
struct Frame {
  const SvgChart& chart;
  double w, h, plot_w, plot_h;
  double x_lo, x_hi;
  AxisTicks y;

  double fx(double x) const {
    double t = chart.log_x ? (std::log2(x) - std::log2(x_lo)) / (std::log2(x_hi) - std::log2(x_lo))
                           : (x - x_lo) / (x_hi - x_lo);
    return kLeft + std::clamp(t, 0.0, 1.0) * plot_w;
  }
  double fy(double v) const {
    double t = chart.log_y ? (std::log10(v) - std::log10(y.lo)) / (std::log10(y.hi) - std::log10(y.lo))
                           : (v - y.lo) / (y.hi - y.lo);
    return kTop + plot_h - std::clamp(t, 0.0, 1.0) * plot_h;
  }
  bool drawn(double x, double v) const {
    return std::isfinite(v) && (!chart.log_x || x > 0) && (!chart.log_y || v > 0);
  }
};

Frame frame_of(const SvgChart& chart) {
  Frame f{chart, double(chart.width), double(chart.height), 0, 0, INFINITY, -INFINITY, y_axis(chart)};
  f.plot_w = f.w - kLeft - kRight;
  f.plot_h = f.h - kTop - kBottom;
  for (const auto& s : chart.series)
    for (auto [x, y] : s.points) {
      if (chart.log_x && x <= 0) continue;
      f.x_lo = std::min(f.x_lo, x);
      f.x_hi = std::max(f.x_hi, x);
    }
  if (!std::isfinite(f.x_lo)) f.x_lo = 1, f.x_hi = 2;
  if (f.x_hi <= f.x_lo) f.x_hi = chart.log_x ? f.x_lo * 2 : f.x_lo + 1;
  return f;
}

// Shaded x ranges, under everything else, with their labels staggered so that neighbours stay readable.
void bands_svg(std::string& o, const Frame& f) {
  for (size_t bi = 0; bi < f.chart.bands.size(); ++bi) {
    const SvgBand& b = f.chart.bands[bi];
    double x0 = f.fx(std::max(b.x_min, f.x_lo)), x1 = f.fx(std::min(b.x_max, f.x_hi));
    if (x1 < x0) continue;
    if (x1 - x0 < 4) x0 -= 2, x1 += 2;  // a single measured size still shows
    o += fmt::format(
        "<rect class=\"rule-band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "fill-opacity=\"0.28\"><title>{}</title></rect>\n",
        num(x0), num(kTop), num(x1 - x0), num(f.plot_h), b.color, xml_escape(b.label));
    o += fmt::format(
        "<text class=\"band-label\" x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#7a5c00\">{}</text>\n",
        num(x0 + 2), num(kTop + 11 + 12 * static_cast<double>(bi % 2)), xml_escape(b.label));
  }
}

// Grid lines, the axes, their ticks and their labels, and the reference line.
void axes_svg(std::string& o, const Frame& f) {
  const SvgChart& chart = f.chart;
  o += "<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">\n";
  for (double y : f.y.ticks)
    o += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n", num(kLeft),
                     num(kLeft + f.plot_w), num(f.fy(y)));
  o += fmt::format("<line class=\"x-axis\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>\n", num(kLeft),
                   num(kLeft + f.plot_w), num(kTop + f.plot_h));
  o += fmt::format("<line class=\"y-axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>\n", num(kLeft),
                   num(kTop), num(kTop + f.plot_h));
  o += "</g>\n<g class=\"ticks\" font-size=\"11\" fill=\"#333\">\n";
  for (double y : f.y.ticks)
    o += fmt::format("<text class=\"y-tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                     num(kLeft - 6), num(f.fy(y) + 4), tick_label(y));
  auto x_label = chart.x_tick_label ? chart.x_tick_label : default_tick;
  const std::vector<double> x_ticks =
      chart.log_x ? log2_ticks(f.x_lo, f.x_hi) : linear_ticks(f.x_lo, f.x_hi, 8).ticks;
  for (double x : x_ticks)
    if (x >= f.x_lo * (1 - 1e-12) && x <= f.x_hi * (1 + 1e-12))
      o += fmt::format("<text class=\"x-tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       num(f.fx(x)), num(kTop + f.plot_h + 16), xml_escape(x_label(x)));
  o += "</g>\n";
  o += fmt::format(
      "<text class=\"axis-label x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
      "font-size=\"12\">{}</text>\n",
      num(kLeft + f.plot_w / 2), num(f.h - 18), xml_escape(chart.x_label));
  o += fmt::format(
      "<text class=\"axis-label y-label\" x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" font-size=\"12\" "
      "transform=\"rotate(-90 {0} {1})\">{2}</text>\n",
      num(22), num(kTop + f.plot_h / 2), xml_escape(chart.y_label));
  if (chart.reference_y)
    o += fmt::format(
        "<line class=\"reference\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#000\" "
        "stroke-width=\"1.5\" "
        "stroke-dasharray=\"6 4\"/>\n",
        num(kLeft), num(kLeft + f.plot_w), num(f.fy(*chart.reference_y)));
}

// One path and its points per series; the emphasised one last, so that it stays visible on top.
void series_svg(std::string& o, const Frame& f) {
  std::vector<const SvgSeries*> order;
  for (const auto& s : f.chart.series) order.push_back(&s);
  std::stable_partition(order.begin(), order.end(), [](const SvgSeries* s) { return !s->emphasis; });
  for (const SvgSeries* s : order) {
    std::string d;
    for (auto [x, y] : s->points)
      if (f.drawn(x, y)) d += fmt::format("{}{} {} ", d.empty() ? "M" : "L", num(f.fx(x)), num(f.fy(y)));
    if (d.empty()) continue;
    o += fmt::format(
        "<path class=\"series{}\" data-series=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\"{}>"
        "<title>{}</title></path>\n",
        s->emphasis ? " default" : "", xml_escape(s->name), d, s->color, s->emphasis ? 3.5 : 1.8,
        s->emphasis ? " stroke-dasharray=\"8 4\"" : "", xml_escape(s->name));
    for (auto [x, y] : s->points)
      if (f.drawn(x, y))
        o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"/>\n", num(f.fx(x)), num(f.fy(y)),
                         s->emphasis ? 3 : 2, s->color);
  }
}

void legend_svg(std::string& o, const Frame& f) {
  double ly = kTop + 4;
  const double lx = f.w - kRight;
  o += "<g class=\"legend\" font-size=\"11\">\n";
  for (const auto& s : f.chart.series) {
    o += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"{4}\"{5}/>\n",
        num(lx + 16), num(lx + 40), num(ly), s.color, s.emphasis ? 3.5 : 2,
        s.emphasis ? " stroke-dasharray=\"8 4\"" : "");
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", num(lx + 46), num(ly + 4), xml_escape(s.name));
    ly += 16;
  }
  if (!f.chart.bands.empty()) {
    o += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"10\" fill=\"#f2c94c\" fill-opacity=\"0.4\"/>\n",
        num(lx + 16), num(ly - 5));
    o += fmt::format("<text x=\"{}\" y=\"{}\">rule range</text>\n", num(lx + 46), num(ly + 4));
  }
  o += "</g>\n";
}

}  // namespace

std::string render_svg(const SvgChart& chart) {
  const Frame f = frame_of(chart);
  std::string o;
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" "
      "height=\"{1}\" role=\"img\" aria-label=\"{2}\">\n",
      chart.width, chart.height, xml_escape(chart.title));
  o += fmt::format("<title>{}</title>\n", xml_escape(chart.title));
  o += fmt::format(
      "<text class=\"chart-title\" x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
      num(kLeft), xml_escape(chart.title));
  bands_svg(o, f);
  axes_svg(o, f);
  series_svg(o, f);
  legend_svg(o, f);
  o += "</svg>\n";
  return o;
}

}  // namespace autotune::report
