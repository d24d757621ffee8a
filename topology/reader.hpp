#pragma once
// Where a Topology comes from: a recorded file (hwloc 2 XML or NCCL topology XML, told apart by content) or
// the live node. Reading is stateless and thread-safe; bad files throw InputError naming the file and line.

#include <filesystem>

#include "topology/model.hpp"

namespace autotune::topology {

// Reads an hwloc 2 XML (<topology> root) or NCCL topology XML (<system> root). Throws InputError(file, line,
// ...) for a file that cannot be read, is malformed or truncated, or is not a topology.
Topology read_topology_file(const std::filesystem::path& path);

// Parses text already in memory; `file` only names it in errors and in Topology::origin.
Topology read_topology_text(std::string_view text, const std::string& file);

}  // namespace autotune::topology
