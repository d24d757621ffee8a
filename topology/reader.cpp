#include "topology/reader.hpp"

#include <pugixml.hpp>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "topology/xml_sources.hpp"

namespace autotune::topology {

Topology read_topology_text(std::string_view text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InputError(file, 1, "expected an hwloc or NCCL topology XML document, found an empty file");
  pugi::xml_document doc;
  const auto result = doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!result)
    throw InputError(file, detail::line_at(text, result.offset),
                     std::string("malformed or truncated XML: ") + result.description());
  const pugi::xml_node root = doc.document_element();
  const std::string name = root.name();
  if (name == "system") return detail::read_nccl_xml(root, file, text);
  if (name == "topology") return detail::read_hwloc_xml(root, file, text);
  throw InputError(
      file, detail::line_at(text, root.offset_debug()),
      "expected a <system> (NCCL topology) or <topology> (hwloc) root element, found <" + name + ">");
}

Topology read_topology_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  return read_topology_text(text, path.string());
}

}  // namespace autotune::topology
