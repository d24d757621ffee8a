#pragma once
// Shared by the two topology XML fuzzers: read any text through topology::read_topology_text (the reader
// the CLI and the tests use) and require that it either yields a topology or refuses with an InputError.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/input_error.hpp"
#include "topology/reader.hpp"

namespace autotune::fuzz {

inline void read_topology(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const topology::Topology topo = topology::read_topology_text(text, "fuzz.xml");
    (void)topo;
  } catch (const InputError&) {
  }
}

}  // namespace autotune::fuzz
