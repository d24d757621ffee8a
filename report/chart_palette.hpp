#pragma once
// Colours for the lines of one chart, all distinguishable: the ten of Tableau's palette, then as many more as
// needed, each the colour of a grid over sRGB farthest (CIE76 colour difference) from every colour chosen so
// far and from black (NCCL's default line) and white (the page). Deterministic and pure.

#include <string>
#include <string_view>
#include <vector>

namespace autotune::report {

// n colours as "#rrggbb", no two alike.
std::vector<std::string> distinct_colors(size_t n);

// CIE76 difference (Euclidean distance in CIELAB, D65) of two "#rrggbb" colours: about 2.3 is just
// noticeable, above 20 two lines read as different colours at a glance.
double color_difference(std::string_view a, std::string_view b);

}  // namespace autotune::report
