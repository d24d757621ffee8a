#pragma once
// Internal to the topology module: the example files as the build embedded them (generated
// examples_data.cpp, written by topology/CMakeLists.txt from topology/examples/*.xml).

#include <span>
#include <string_view>

namespace autotune::topology::detail {

struct BundledExample {
  std::string_view name;  // file name without .xml
  std::string_view xml;
};

std::span<const BundledExample> bundled_examples();

}  // namespace autotune::topology::detail
