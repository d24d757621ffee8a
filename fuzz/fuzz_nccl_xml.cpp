// Fuzzes the NCCL topology XML reader (<system> documents, NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE), through
// read_topology_text. Seeded with NCCL dumps; inputs whose root is not <system> are left to fuzz_hwloc_xml.

#include "fuzz/fuzz_topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.find("<system") == std::string_view::npos) return 0;
  autotune::fuzz::read_topology(data, size);
  return 0;
}
