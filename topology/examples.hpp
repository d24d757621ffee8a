#pragma once
// Example nodes bundled into the library (topology/examples/*.xml, NCCL topology XML written for this
// project from public facts, embedded at build time so the binary works anywhere). The simulator and
// `tune --simulate --example NAME` start from these. Thread-safe: the data is immutable.

#include <string>
#include <string_view>
#include <vector>

#include "topology/model.hpp"

namespace autotune::topology {

// Sorted: "a100-pcie-8x", "h100-8x", "h100-8x-2nic".
std::vector<std::string> example_names();

// The parsed example; origin is "example:<name>". Throws InputError listing the names for an unknown one.
Topology load_example(std::string_view name);

// The example's NCCL topology XML, as bundled (usable as NCCL_TOPO_FILE). Same errors as load_example.
std::string_view example_xml(std::string_view name);

}  // namespace autotune::topology
