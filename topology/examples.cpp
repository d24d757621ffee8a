#include "topology/examples.hpp"

#include <algorithm>

#include "common/input_error.hpp"
#include "topology/examples_data.hpp"
#include "topology/reader.hpp"

namespace autotune::topology {

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& e : detail::bundled_examples()) names.emplace_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string_view example_xml(std::string_view name) {
  for (const auto& e : detail::bundled_examples())
    if (e.name == name) return e.xml;
  std::string known;
  for (const auto& n : example_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("<example>", 0, "expected one of " + known + ", found \"" + std::string(name) + "\"");
}

Topology load_example(std::string_view name) {
  const std::string_view xml = example_xml(name);
  Topology t = read_topology_text(xml, "example:" + std::string(name));
  return t;
}

}  // namespace autotune::topology
