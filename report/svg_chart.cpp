#include "report/svg_chart.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

namespace autotune::report {
namespace {

constexpr double kLeft = 80, kRight = 230, kTop = 40, kBottom = 60;  // margins: the legend sits on the right

// 1, 2, 5 x 10^k steps so that about `target` ticks cover [0, max].
double nice_step(double span, int target) {
  if (span <= 0) return 1.0;
  double raw = span / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string default_tick(double v) {
  return fmt::format("{:g}", v);
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

std::string series_color(size_t index) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                   "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"};
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string render_svg(const SvgChart& chart) {
  const double w = chart.width, h = chart.height;
  const double plot_w = w - kLeft - kRight, plot_h = h - kTop - kBottom;
  auto tick_label = chart.x_tick_label ? chart.x_tick_label : default_tick;

  double x_lo = INFINITY, x_hi = -INFINITY, y_hi = 0.0, y_lo = 0.0;
  for (const auto& s : chart.series)
    for (auto [x, y] : s.points) {
      if (chart.log_x && x <= 0) continue;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      if (std::isfinite(y)) y_hi = std::max(y_hi, y);
    }
  if (!std::isfinite(x_lo)) x_lo = 1, x_hi = 2;
  if (x_hi <= x_lo) x_hi = chart.log_x ? x_lo * 2 : x_lo + 1;
  if (chart.reference_y) {
    y_hi = std::max(y_hi, *chart.reference_y * 1.1);
    // A speedup chart reads best around its reference: start the axis below the lowest value.
    double lowest = *chart.reference_y;
    for (const auto& s : chart.series)
      for (auto [x, y] : s.points)
        if (std::isfinite(y)) lowest = std::min(lowest, y);
    y_lo = std::max(0.0, std::floor(lowest * 10 - 1) / 10);
  }
  if (y_hi <= y_lo) y_hi = y_lo + 1;
  double step = nice_step(y_hi - y_lo, 5);
  y_hi = std::ceil(y_hi / step) * step;

  auto fx = [&](double x) {
    double t = chart.log_x ? (std::log2(x) - std::log2(x_lo)) / (std::log2(x_hi) - std::log2(x_lo))
                           : (x - x_lo) / (x_hi - x_lo);
    return kLeft + std::clamp(t, 0.0, 1.0) * plot_w;
  };
  auto fy = [&](double y) {
    return kTop + plot_h - std::clamp((y - y_lo) / (y_hi - y_lo), 0.0, 1.0) * plot_h;
  };

  std::string o;
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" "
      "height=\"{1}\" role=\"img\" aria-label=\"{2}\">\n",
      chart.width, chart.height, xml_escape(chart.title));
  o += fmt::format("<title>{}</title>\n", xml_escape(chart.title));
  o += fmt::format(
      "<text class=\"chart-title\" x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
      num(kLeft), xml_escape(chart.title));
  // Bands under everything else.
  for (size_t bi = 0; bi < chart.bands.size(); ++bi) {
    const SvgBand& b = chart.bands[bi];
    double x0 = fx(std::max(b.x_min, x_lo)), x1 = fx(std::min(b.x_max, x_hi));
    if (x1 < x0) continue;
    if (x1 - x0 < 4) x0 -= 2, x1 += 2;  // a single measured size still shows
    o += fmt::format(
        "<rect class=\"rule-band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "fill-opacity=\"0.28\">"
        "<title>{}</title></rect>\n",
        num(x0), num(kTop), num(x1 - x0), num(plot_h), b.color, xml_escape(b.label));
    o += fmt::format(
        "<text class=\"band-label\" x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#7a5c00\">{}</text>\n",
        num(x0 + 2), num(kTop + 11 + 12 * static_cast<double>(bi % 2)), xml_escape(b.label));
  }
  // Grid, ticks and axes.
  o += "<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">\n";
  for (double y = y_lo; y <= y_hi + step / 2; y += step) {
    o += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n", num(kLeft),
                     num(kLeft + plot_w), num(fy(y)));
  }
  o += fmt::format("<line class=\"x-axis\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>\n", num(kLeft),
                   num(kLeft + plot_w), num(kTop + plot_h));
  o += fmt::format("<line class=\"y-axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>\n", num(kLeft),
                   num(kTop), num(kTop + plot_h));
  o += "</g>\n<g class=\"ticks\" font-size=\"11\" fill=\"#333\">\n";
  for (double y = y_lo; y <= y_hi + step / 2; y += step)
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", num(kLeft - 6),
                     num(fy(y) + 4), fmt::format("{:g}", std::round(y * 1000) / 1000));
  if (chart.log_x) {
    int e0 = static_cast<int>(std::ceil(std::log2(x_lo) - 1e-9)),
        e1 = static_cast<int>(std::floor(std::log2(x_hi) + 1e-9));
    int every = std::max(1, (e1 - e0 + 9) / 10);
    for (int e = e0; e <= e1; e += every) {
      double x = std::ldexp(1.0, e);
      o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(fx(x)),
                       num(kTop + plot_h + 16), xml_escape(tick_label(x)));
    }
  } else {
    double xs = nice_step(x_hi - x_lo, 8);
    for (double x = std::ceil(x_lo / xs) * xs; x <= x_hi; x += xs)
      o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(fx(x)),
                       num(kTop + plot_h + 16), xml_escape(tick_label(x)));
  }
  o += "</g>\n";
  o += fmt::format(
      "<text class=\"axis-label x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
      "font-size=\"12\">{}</text>\n",
      num(kLeft + plot_w / 2), num(h - 18), xml_escape(chart.x_label));
  o += fmt::format(
      "<text class=\"axis-label y-label\" x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" font-size=\"12\" "
      "transform=\"rotate(-90 {0} {1})\">{2}</text>\n",
      num(22), num(kTop + plot_h / 2), xml_escape(chart.y_label));
  if (chart.reference_y)
    o += fmt::format(
        "<line class=\"reference\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#000\" "
        "stroke-width=\"1.5\" "
        "stroke-dasharray=\"6 4\"/>\n",
        num(kLeft), num(kLeft + plot_w), num(fy(*chart.reference_y)));
  // Series: the emphasised one last, so that it stays visible on top.
  std::vector<const SvgSeries*> order;
  for (const auto& s : chart.series) order.push_back(&s);
  std::stable_partition(order.begin(), order.end(), [](const SvgSeries* s) { return !s->emphasis; });
  for (const SvgSeries* s : order) {
    std::string d;
    for (auto [x, y] : s->points) {
      if ((chart.log_x && x <= 0) || !std::isfinite(y)) continue;
      d += fmt::format("{}{} {} ", d.empty() ? "M" : "L", num(fx(x)), num(fy(y)));
    }
    if (d.empty()) continue;
    o += fmt::format(
        "<path class=\"series{}\" data-series=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\"{}>"
        "<title>{}</title></path>\n",
        s->emphasis ? " default" : "", xml_escape(s->name), d, s->color, s->emphasis ? 3.5 : 1.8,
        s->emphasis ? " stroke-dasharray=\"8 4\"" : "", xml_escape(s->name));
    for (auto [x, y] : s->points)
      if ((!chart.log_x || x > 0) && std::isfinite(y))
        o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"/>\n", num(fx(x)), num(fy(y)),
                         s->emphasis ? 3 : 2, s->color);
  }
  // Legend.
  double ly = kTop + 4;
  o += "<g class=\"legend\" font-size=\"11\">\n";
  for (const auto& s : chart.series) {
    o += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"{4}\"{5}/>\n",
        num(w - kRight + 16), num(w - kRight + 40), num(ly), s.color, s.emphasis ? 3.5 : 2,
        s.emphasis ? " stroke-dasharray=\"8 4\"" : "");
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", num(w - kRight + 46), num(ly + 4),
                     xml_escape(s.name));
    ly += 16;
  }
  if (!chart.bands.empty()) {
    o += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"10\" fill=\"#f2c94c\" fill-opacity=\"0.4\"/>\n",
        num(w - kRight + 16), num(ly - 5));
    o += fmt::format("<text x=\"{}\" y=\"{}\">rule range</text>\n", num(w - kRight + 46), num(ly + 4));
  }
  o += "</g>\n</svg>\n";
  return o;
}

}  // namespace autotune::report
