#include "topology/reader.hpp"

#include <algorithm>
#include <cctype>

#include <pugixml.hpp>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "topology/probe_json.hpp"
#include "topology/xml_sources.hpp"

namespace autotune::topology {
namespace {

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

// Both hwloc and NCCL write UTF-8, and this reader decodes nothing else. A document that declares another
// encoding would be misread here and handed to libxml2's converters inside hwloc (which leak on names they
// do not know), so it is refused where it says so.
void require_utf8(const pugi::xml_document& doc, const std::string& file, std::string_view text) {
  const pugi::xml_node declaration = doc.first_child();
  if (declaration.type() != pugi::node_declaration) return;
  const pugi::xml_attribute encoding = declaration.attribute("encoding");
  if (!encoding) return;
  const std::string_view name = encoding.value();
  if (same_ignoring_case(name, "UTF-8") || same_ignoring_case(name, "US-ASCII")) return;
  throw InputError(file, detail::line_at(text, declaration.offset_debug()),
                   "expected encoding=\"UTF-8\" (what hwloc and NCCL write); found encoding=\"" +
                       std::string(name) + "\"");
}

}  // namespace

Topology read_topology_text(std::string_view text, const std::string& file) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    throw InputError(file, 1, "expected an hwloc or NCCL topology XML document, found an empty file");
  if (text[first] == '{') return detail::read_probe_json(text, file);
  pugi::xml_document doc;
  const auto result = doc.load_buffer(text.data(), text.size(), pugi::parse_default | pugi::parse_declaration,
                                      pugi::encoding_utf8);
  if (!result)
    throw InputError(file, detail::line_at(text, result.offset),
                     std::string("malformed or truncated XML: ") + result.description());
  require_utf8(doc, file, text);
  const pugi::xml_node root = doc.document_element();
  const std::string name = root.name();
  if (name == "system") return detail::read_nccl_xml(root, file, text);
  if (name == "topology") return detail::read_hwloc_xml(root, file, text);
  throw InputError(
      file, detail::line_at(text, root.offset_debug()),
      "expected a <system> (NCCL topology) or <topology> (hwloc) root element, found <" + name + ">");
}

Topology read_topology_file(const std::filesystem::path& path) {
  const std::string text = read_file(path, kTopologyInput);
  return read_topology_text(text, path.string());
}

}  // namespace autotune::topology
