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

std::string render_svg(const SvgChart& chart) {
  const double w = chart.width, h = chart.height;
  const double plot_w = w - kLeft - kRight, plot_h = h - kTop - kBottom;
  auto x_label = chart.x_tick_label ? chart.x_tick_label : default_tick;

  double x_lo = INFINITY, x_hi = -INFINITY;
  for (const auto& s : chart.series)
    for (auto [x, y] : s.points) {
      if (chart.log_x && x <= 0) continue;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
    }
  if (!std::isfinite(x_lo)) x_lo = 1, x_hi = 2;
  if (x_hi <= x_lo) x_hi = chart.log_x ? x_lo * 2 : x_lo + 1;
  const AxisTicks y_ticks = y_axis(chart);
  const double y_lo = y_ticks.lo, y_hi = y_ticks.hi;

  auto fx = [&](double x) {
    double t = chart.log_x ? (std::log2(x) - std::log2(x_lo)) / (std::log2(x_hi) - std::log2(x_lo))
                           : (x - x_lo) / (x_hi - x_lo);
    return kLeft + std::clamp(t, 0.0, 1.0) * plot_w;
  };
  auto fy = [&](double y) {
    double t = chart.log_y ? (std::log10(y) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo))
                           : (y - y_lo) / (y_hi - y_lo);
    return kTop + plot_h - std::clamp(t, 0.0, 1.0) * plot_h;
  };
  auto drawn = [&](double x, double y) {
    return std::isfinite(y) && (!chart.log_x || x > 0) && (!chart.log_y || y > 0);
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
  for (double y : y_ticks.ticks)
    o += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n", num(kLeft),
                     num(kLeft + plot_w), num(fy(y)));
  o += fmt::format("<line class=\"x-axis\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>\n", num(kLeft),
                   num(kLeft + plot_w), num(kTop + plot_h));
  o += fmt::format("<line class=\"y-axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>\n", num(kLeft),
                   num(kTop), num(kTop + plot_h));
  o += "</g>\n<g class=\"ticks\" font-size=\"11\" fill=\"#333\">\n";
  for (double y : y_ticks.ticks)
    o += fmt::format("<text class=\"y-tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                     num(kLeft - 6), num(fy(y) + 4), tick_label(y));
  if (chart.log_x) {
    int e0 = static_cast<int>(std::ceil(std::log2(x_lo) - 1e-9)),
        e1 = static_cast<int>(std::floor(std::log2(x_hi) + 1e-9));
    // Every 1, 2, 5 or 10 doublings, on exponents that are multiples of it: 1K 4K 16K, 1K 32K 1M, 1K 1M 1G.
    int every = 10;
    for (int k : {1, 2, 5, 10})
      if ((e1 - e0) / k <= 10) {
        every = k;
        break;
      }
    for (int e = e0; e <= e1; ++e) {
      if (((e % every) + every) % every != 0) continue;
      double x = std::ldexp(1.0, e);
      o += fmt::format("<text class=\"x-tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       num(fx(x)), num(kTop + plot_h + 16), xml_escape(x_label(x)));
    }
  } else {
    for (double x : linear_ticks(x_lo, x_hi, 8).ticks)
      if (x >= x_lo && x <= x_hi)
        o += fmt::format("<text class=\"x-tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                         num(fx(x)), num(kTop + plot_h + 16), xml_escape(x_label(x)));
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
      if (!drawn(x, y)) continue;
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
      if (drawn(x, y))
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
