#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "topology/examples.hpp"

using namespace autotune::topology;

TEST_CASE("bundled examples are listed and sorted", "[examples]") {
  const auto names = example_names();
  REQUIRE(names == std::vector<std::string>{"a100-8x", "a100-pcie-8x", "h100-8x", "h100-8x-2nic", "h200-8x"});
}

TEST_CASE("h100-8x is 8 H100 SXM behind NVSwitches with one NDR NIC per GPU", "[examples]") {
  const Topology t = load_example("h100-8x");
  CHECK(t.origin == "example:h100-8x");
  REQUIRE(t.gpus.size() == 8);
  CHECK(t.numa_nodes == 2);
  CHECK(t.nvswitch_seen);
  CHECK(t.nvswitches.size() == 4);
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    const Gpu& g = t.gpus[i];
    CHECK(g.index == static_cast<int>(i));
    CHECK(g.sm == 90);
    CHECK(g.name == "NVIDIA H100 80GB HBM3");
    CHECK(g.nvlink_links() == 18);
    CHECK(g.numa_node == (i < 4 ? 0 : 1));
  }
  REQUIRE(t.nics.size() == 8);
  for (const Nic& n : t.nics) {
    CHECK(n.model == "ConnectX-7");
    REQUIRE(n.ports.size() == 1);
    CHECK(n.ports[0].speed_gbps == 400.0);
    CHECK(n.ports[0].link_layer == "InfiniBand");
    CHECK(n.ports[0].state == "ACTIVE");
  }
}

TEST_CASE("a100-pcie-8x has no NVLink and two HDR NICs", "[examples]") {
  const Topology t = load_example("a100-pcie-8x");
  REQUIRE(t.gpus.size() == 8);
  CHECK_FALSE(t.nvswitch_seen);
  for (const Gpu& g : t.gpus) {
    CHECK(g.sm == 80);
    CHECK(g.nvlink_links() == 0);
  }
  REQUIRE(t.nics.size() == 2);
  CHECK(t.nics[0].ports[0].speed_gbps == 200.0);
  CHECK(t.nics[0].numa_node == 0);
  CHECK(t.nics[1].numa_node == 1);
}

TEST_CASE("h200-8x is 8 H200 SXM behind NVSwitches with one NDR NIC per GPU, as Azure's ND H200 v5",
          "[examples]") {
  const Topology t = load_example("h200-8x");
  REQUIRE(t.gpus.size() == 8);
  CHECK(t.numa_nodes == 2);
  CHECK(t.nvswitches.size() == 4);
  for (const Gpu& g : t.gpus) {
    CHECK(g.sm == 90);
    CHECK(g.name == "NVIDIA H200");
    CHECK(g.nvlink_links() == 18);
  }
  REQUIRE(t.nics.size() == 8);
  for (const Nic& n : t.nics) {
    REQUIRE(n.ports.size() == 1);
    CHECK(n.ports[0].speed_gbps == 400.0);
    CHECK(n.ports[0].link_layer == "InfiniBand");
  }
  // A machine of its own: another fingerprint than the H100 node's.
  CHECK(load_example("h100-8x").gpus.front().name != t.gpus.front().name);
}

TEST_CASE("a100-8x is a DGX A100: 12 NVLink3 links to 6 NVSwitches, 8 HDR NICs beside the GPUs",
          "[examples]") {
  const Topology t = load_example("a100-8x");
  REQUIRE(t.gpus.size() == 8);
  CHECK(t.numa_nodes == 2);
  CHECK(t.nvswitch_seen);
  CHECK(t.nvswitches.size() == 6);
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    CHECK(t.gpus[i].sm == 80);
    CHECK(t.gpus[i].name == "NVIDIA A100-SXM4-40GB");
    CHECK(t.gpus[i].nvlink_links() == 12);
    CHECK(t.gpus[i].numa_node == (i < 4 ? 0 : 1));
  }
  REQUIRE(t.nics.size() == 8);
  for (const Nic& n : t.nics) {
    CHECK(n.model == "ConnectX-6");
    REQUIRE(n.ports.size() == 1);
    CHECK(n.ports[0].speed_gbps == 200.0);
    CHECK(n.ports[0].state == "ACTIVE");
  }
}

TEST_CASE("an unknown example names the known ones", "[examples]") {
  try {
    load_example("dgx-9000");
    FAIL("expected InputError");
  } catch (const autotune::InputError& e) {
    CHECK(std::string(e.what()).find("a100-8x, a100-pcie-8x, h100-8x, h100-8x-2nic, h200-8x") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("dgx-9000") != std::string::npos);
  }
}
