#include "report/chart_palette.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace autotune::report {
namespace {

using Lab = std::array<double, 3>;

constexpr std::array<std::string_view, 10> kTableau = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                       "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  throw std::invalid_argument("not a #rrggbb colour");
}

Lab lab_of_rgb(int r8, int g8, int b8) {
  auto linear = [](int c) {
    const double v = c / 255.0;
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  const double r = linear(r8), g = linear(g8), b = linear(b8);
  // sRGB to XYZ (D65), then XYZ to CIELAB with the D65 white point.
  const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  auto f = [](double t) { return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116; };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

Lab lab_of(std::string_view hex) {
  if (hex.size() != 7 || hex[0] != '#') throw std::invalid_argument("not a #rrggbb colour");
  auto byte = [&](size_t at) { return hex_digit(hex[at]) * 16 + hex_digit(hex[at + 1]); };
  return lab_of_rgb(byte(1), byte(3), byte(5));
}

double distance(const Lab& a, const Lab& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                   (a[2] - b[2]) * (a[2] - b[2]));
}

}  // namespace

double color_difference(std::string_view a, std::string_view b) {
  return distance(lab_of(a), lab_of(b));
}

std::vector<std::string> distinct_colors(size_t n) {
  std::vector<std::string> out;
  std::vector<Lab> taken = {lab_of("#000000"), lab_of("#ffffff")};
  for (size_t i = 0; i < std::min(n, kTableau.size()); ++i) {
    out.emplace_back(kTableau[i]);
    taken.push_back(lab_of(kTableau[i]));
  }
  // A grid of 8 levels per channel; lines need contrast on white and must not pass for the black default.
  std::vector<std::pair<std::string, Lab>> grid;
  for (int r = 0; r < 8; ++r)
    for (int g = 0; g < 8; ++g)
      for (int b = 0; b < 8; ++b) {
        const int R = r * 255 / 7, G = g * 255 / 7, B = b * 255 / 7;
        Lab lab = lab_of_rgb(R, G, B);
        if (lab[0] < 40 || lab[0] > 80) continue;
        grid.emplace_back(fmt::format("#{:02x}{:02x}{:02x}", R, G, B), lab);
      }
  while (out.size() < n) {
    size_t best = 0;
    double best_gap = -1;
    for (size_t i = 0; i < grid.size(); ++i) {
      double gap = std::numeric_limits<double>::infinity();
      for (const Lab& t : taken) gap = std::min(gap, distance(grid[i].second, t));
      if (gap > best_gap) best_gap = gap, best = i;  // strict: the first of equals, deterministically
    }
    out.push_back(grid[best].first);
    taken.push_back(grid[best].second);
    grid.erase(grid.begin() + static_cast<long>(best));
    if (grid.empty()) break;  // 300-odd colours: more lines than any chart can show
  }
  return out;
}

}  // namespace autotune::report
