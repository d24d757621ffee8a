// Fuzzes loading hwloc 2 XML (<topology> documents) through our reader: pugixml's well-formedness check,
// then hwloc's own XML import and our conversion of its objects. Inputs without a <topology> element are left
// to fuzz_nccl_xml.

#include <hwloc.h>

#include <cstdlib>

#include "fuzz/fuzz_topology.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // hwloc reports XML it rejects on stderr unless told otherwise; the reader turns the failure into an
  // InputError already, and thousands of lines a second slow the fuzzer down.
  setenv("HWLOC_XML_VERBOSE", "0", 1);
  // hwloc loads its plugins (libxml2's importer among them) with the first topology and unloads them with
  // the last. Unloaded, what libxml2 keeps in its globals looks leaked and the frames have no names; one
  // topology held for the process keeps them loaded, so only real leaks are reported, with names.
  static hwloc_topology_t resident = nullptr;
  if (!resident) hwloc_topology_init(&resident);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.find("<topology") == std::string_view::npos) return 0;
  autotune::fuzz::read_topology(data, size);
  return 0;
}
