// hwloc 2 XML goes through hwloc itself, so that a recorded file and the live node share one conversion
// (hwloc_convert.cpp). pugixml has already checked the document is well formed, with line numbers, and
// hwloc_xml_checks.cpp what hwloc 2.9 would crash on; hwloc's own errors carry no line, so they name the
// file.

#include <hwloc.h>

#include <memory>
#include <string>

#include "common/input_error.hpp"
#include "topology/hwloc_convert.hpp"
#include "topology/hwloc_xml_checks.hpp"
#include "topology/xml_sources.hpp"

namespace autotune::topology::detail {

Topology read_hwloc_xml(const pugi::xml_node& root, const std::string& file, std::string_view text) {
  if (!root.child("object"))
    throw InputError(file, line_at(text, root.offset_debug()),
                     "expected an <object> (the machine) inside <topology>, found none");
  check_before_hwloc(root, file, text);
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) throw std::runtime_error("hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> guard(topo, hwloc_topology_destroy);
  // hwloc drops I/O objects by default, also when loading XML.
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
  const std::string buffer(text);  // hwloc wants the terminating NUL counted in the length
  if (hwloc_topology_set_xmlbuffer(topo, buffer.c_str(), static_cast<int>(buffer.size() + 1)) != 0 ||
      hwloc_topology_load(topo) != 0)
    throw InputError(file, 0,
                     "hwloc could not load this hwloc XML (an unsupported version or inconsistent content)");
  Topology out;
  out.origin = file;
  fill_from_hwloc(topo, out);
  out.sources.push_back({"file:" + file, true,
                         "hwloc XML: " + std::to_string(out.gpus.size()) + " GPUs, " +
                             std::to_string(out.nics.size()) + " NICs"});
  return out;
}

}  // namespace autotune::topology::detail
