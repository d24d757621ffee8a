#pragma once
// Internal to the topology module: the recorded-file readers behind read_topology_file. Each turns an
// already parsed document into the model and throws InputError with the file and line for content that
// is not what its format promises.

#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "topology/model.hpp"

namespace autotune::topology::detail {

// 1-based line of a byte offset into text (pugixml reports offsets, people read lines).
int line_at(std::string_view text, std::ptrdiff_t offset);

// NCCL topology XML (<system version="1">): full dumps and pci-only skeletons.
Topology read_nccl_xml(const pugi::xml_node& system, const std::string& file, std::string_view text);

// hwloc 2 XML (<topology>): loaded through hwloc itself with I/O objects kept.
Topology read_hwloc_xml(const pugi::xml_node& root, const std::string& file, std::string_view text);

}  // namespace autotune::topology::detail
