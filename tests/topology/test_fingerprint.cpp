#include <catch2/catch.hpp>

#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"

using namespace autotune::topology;

TEST_CASE("fingerprint: 16 hex digits, stable across bus ids and names", "[fingerprint]") {
  const Topology a = load_example("h100-8x");
  const std::string fp = fingerprint(a, 228);
  REQUIRE(fp.size() == 16);
  CHECK(fp.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(fingerprint(a, 228) == fp);

  Topology b = a;  // another node of the same kind: other bus ids, GUIDs, device names, order
  for (auto& g : b.gpus) {
    g.pci_bus_id[5] = 'f';
    for (auto& p : g.pci_path) p.bus_id += "x";
  }
  for (auto& n : b.nics) {
    n.pci_bus_id[5] = 'f';
    n.name = "ib" + n.name;
    for (auto& p : n.ports) p.guid = "0xdead";
    for (auto& p : n.pci_path) p.bus_id += "x";
  }
  b.origin = "another-host";
  std::reverse(b.nics.begin(), b.nics.end());
  CHECK(fingerprint(b, 228) == fp);
}

TEST_CASE("fingerprint: NIC speed, GPU count, NCCL version and kind change it", "[fingerprint]") {
  const Topology a = load_example("h100-8x");
  const std::string fp = fingerprint(a, 228);
  Topology slower = a;
  slower.nics[3].ports[0].speed_gbps = 200;
  CHECK(fingerprint(slower, 228) != fp);
  Topology fewer = a;
  fewer.gpus.pop_back();
  CHECK(fingerprint(fewer, 228) != fp);
  CHECK(fingerprint(a, 227) != fp);
  CHECK(fingerprint(load_example("h100-8x-2nic"), 228) != fp);
  CHECK(fingerprint_description(a, 228).find("gpu 8x NVIDIA H100 80GB HBM3 sm90 nvlink switchx18") !=
        std::string::npos);
}
