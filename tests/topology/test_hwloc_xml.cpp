#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "test_helpers.hpp"
#include "topology/analysis.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;

TEST_CASE("hwloc XML: own fixture", "[hwloc-xml]") {
  const Topology t = read_topology_file(test::own_fixture("hwloc-small.xml"));
  CHECK(t.numa_nodes == 2);
  REQUIRE(t.gpus.size() == 2);
  CHECK(t.gpus[0].index == 0);
  CHECK(t.gpus[0].pci_bus_id == "0000:03:00.0");
  CHECK(t.gpus[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(t.gpus[0].sm == 90);
  CHECK(t.gpus[0].numa_node == 0);
  CHECK(t.gpus[1].pci_bus_id == "0000:83:00.0");
  CHECK(t.gpus[1].numa_node == 1);
  REQUIRE(t.nics.size() == 1);
  CHECK(t.nics[0].name == "mlx5_0");
  CHECK(t.nics[0].pci_bus_id == "0000:04:00.0");
  CHECK(t.nics[0].model == "ConnectX-7");
  CHECK(t.nics[0].numa_node == 0);
}

TEST_CASE("hwloc XML: a <topology> without objects is not a topology", "[hwloc-xml][errors]") {
  try {
    read_topology_text("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n</topology>\n", "h.xml");
    FAIL("expected InputError");
  } catch (const autotune::InputError& e) {
    CHECK(std::string(e.what()) ==
          "h.xml:2: expected an <object> (the machine) inside <topology>, found none");
  }
}

TEST_CASE("recorded: hwloc 32em64t, the ConnectX-4 shares a root port with cuda0", "[hwloc-xml][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "hwloc-xml/hwloc-32em64t-2n8c2t-pci-normalio.xml");
  const Topology t = read_topology_file(path);
  CHECK(t.numa_nodes == 2);
  REQUIRE(t.gpus.size() == 3);
  // cuda0 is numbered 0; the two GPUs without a CUDA OS device follow.
  CHECK(t.gpus[0].index == 0);
  CHECK(t.gpus[0].pci_bus_id == "0000:84:00.0");
  CHECK(t.gpus[0].numa_node == 1);
  REQUIRE(t.nics.size() == 1);
  CHECK(t.nics[0].name == "mlx5_0");
  CHECK(t.nics[0].model == "ConnectX-4");
  CHECK(t.nics[0].pci_bus_id == "0000:04:00.0");
}

TEST_CASE("recorded: hwloc POWER8 with 4 P100 and an NVLinkBandwidth matrix", "[hwloc-xml][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "hwloc-xml/hwloc-power8gpudistances.xml");
  const Topology t = read_topology_file(path);
  REQUIRE(t.gpus.size() == 4);
  CHECK(t.nics.empty());
  CHECK(t.numa_nodes == 2);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(t.gpus[i].index == static_cast<int>(i));
    CHECK(t.gpus[i].sm == 60);
    CHECK(t.gpus[i].name == "Tesla P100-SXM2-16GB");
  }
  CHECK(t.gpus[0].pci_bus_id == "0002:01:00.0");
  CHECK(t.gpus[1].pci_bus_id == "0003:01:00.0");
  CHECK_FALSE(t.nvswitch_seen);
}

TEST_CASE("recorded: hwloc 32em64t, Port1LID and Port1LMC are not ports", "[hwloc-xml][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "hwloc-xml/hwloc-32em64t-2n8c2t-pci-normalio.xml");
  const Topology t = read_topology_file(path);
  REQUIRE(t.nics.size() == 1);
  REQUIRE(t.nics[0].ports.size() == 1);  // Port1State only; Port1LID and Port1LMC describe the same port
  CHECK(t.nics[0].ports[0].port == 1);
  CHECK(t.nics[0].ports[0].state == "ACTIVE");
  for (const auto& f : analyze(t).health) CHECK(f.kind != "nic_port_not_active");
}
