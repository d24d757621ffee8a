// Fuzzes the probe's JSON record reader (`probe --input` of what `probe --format json` wrote), through
// read_topology_text, then the analysis and health findings on whatever it accepted (a record carries
// outside readings into them), and the reader of `dcgmi diag -j` output. Each must either succeed or
// refuse with an InputError; nothing else may escape.

#include "fuzz/fuzz_topology.hpp"
#include "topology/analysis.hpp"
#include "topology/dcgm_diag.hpp"
#include "topology/fingerprint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)autotune::topology::parse_dcgm_diag(text, 0, 1);
  if (text.find('{') == std::string_view::npos) return 0;
  try {
    const autotune::topology::Topology t = autotune::topology::read_topology_text(text, "fuzz.json");
    const autotune::topology::Analysis a = autotune::topology::analyze(t);
    (void)autotune::topology::fingerprint(t, 228);
    (void)a;
  } catch (const autotune::InputError&) {
  }
  return 0;
}
