#pragma once
// Internal to the simulator: simulator/published/points.csv as the build embedded it (generated
// published_data.cpp, written by simulator/CMakeLists.txt).

#include <string_view>

namespace autotune::sim::detail {

std::string_view published_points_csv();

}  // namespace autotune::sim::detail
