#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "test_helpers.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;

namespace {
// The error for text, or "" when it parsed.
std::string error_of(const std::string& text) {
  try {
    read_topology_text(text, "t.xml");
  } catch (const autotune::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("NCCL XML: own full fixture", "[nccl-xml]") {
  const Topology t = read_topology_file(test::own_fixture("nccl-full.xml"));
  REQUIRE(t.gpus.size() == 2);
  CHECK(t.gpus[0].pci_bus_id == "0000:1b:00.0");
  CHECK(t.gpus[0].sm == 80);
  CHECK(t.gpus[0].nvlink_links() == 12);
  CHECK(t.gpus[0].nvlinks[0].remote == NvLinkRemote::gpu);
  CHECK(t.gpus[1].numa_node == 1);
  REQUIRE(t.nics.size() == 2);
  CHECK(t.nics[0].name == "mlx5_0");
  CHECK(t.nics[0].pci_bus_id == "0000:1c:00.0");
  CHECK(t.nics[0].ports[0].speed_gbps == 200.0);
  CHECK(t.nics[1].name == "mlx5_1");
  CHECK(t.nics[1].numa_node == 1);
  CHECK(t.numa_nodes == 2);
  REQUIRE(t.gpus[0].pci_path.size() == 1);
  CHECK(t.gpus[0].pci_path[0].bus_id == "0000:1a:00.0");
}

TEST_CASE("NCCL XML: own skeleton fixture (pci elements only)", "[nccl-xml]") {
  const Topology t = read_topology_file(test::own_fixture("nccl-skeleton.xml"));
  REQUIRE(t.gpus.size() == 2);
  CHECK(t.gpus[0].sm == 90);  // from the PCI device id
  CHECK(t.gpus[0].index == 0);
  CHECK(t.gpus[1].index == 1);
  REQUIRE(t.nics.size() == 1);
  CHECK(t.nics[0].model == "ConnectX-7");
  CHECK(t.nics[0].ports.empty());
}

TEST_CASE("NCCL XML: malformed, truncated and foreign files name file and line", "[nccl-xml][errors]") {
  CHECK(error_of("") == "t.xml:1: expected an hwloc or NCCL topology XML document, found an empty file");
  CHECK(error_of("<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:01:00.0\"")
            .rfind("t.xml:3: malformed or truncated XML", 0) == 0);
  CHECK(error_of("<?xml version=\"1.0\"?>\n<html><body/></html>") ==
        "t.xml:2: expected a <system> (NCCL topology) or <topology> (hwloc) root element, found <html>");
  CHECK(error_of("<system version=\"1\">\n</system>") ==
        "t.xml:1: expected at least one <cpu> element under <system>, found none (not an NCCL topology?)");
  CHECK(error_of("<system>\n<cpu numaid=\"0\">\n<pci busid=\"zz\" class=\"0x030200\"/>\n</cpu>\n</system>") ==
        "t.xml:3: expected a PCI bus id like 0000:1b:00.0 in busid=, found \"zz\"");
  CHECK(error_of("<system>\n<cpu numaid=\"x\"/>\n</system>") ==
        "t.xml:2: expected an integer in numaid=, found \"x\"");
  CHECK(error_of("<system>\n<cpu>\n\n<pci busid=\"0000:01:00.0\" class=\"nope\"/></cpu></system>") ==
        "t.xml:4: expected a hex number in class=, found \"nope\"");
}

TEST_CASE("NCCL XML: empty attributes of real dumps are unknown, not errors", "[nccl-xml]") {
  // NCCL writes link_speed="" / link_width="" on host bridges whose link it could not read.
  const std::string text =
      "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\">\n"
      "<pci busid=\"0000:00:01.0\" class=\"0x060400\" vendor=\"\" device=\"\" link_speed=\"\" "
      "link_width=\"\">\n"
      "<pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\" "
      "link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"><gpu dev=\"0\" sm=\"\" rank=\"\"/></pci>\n"
      "</pci>\n</cpu>\n</system>\n";
  CHECK(error_of(text) == "");
  const Topology t = read_topology_text(text, "t.xml");
  REQUIRE(t.gpus.size() == 1);
  CHECK(t.gpus[0].sm == 90);  // unknown in the file: from the PCI device id
  CHECK(t.gpus[0].link.width == 16);
  REQUIRE(t.gpus[0].pci_path.size() == 1);
  CHECK(t.gpus[0].pci_path[0].bus_id == "0000:00:01.0");
  // Required attributes stay required, and a present value still has to parse.
  CHECK(error_of("<system>\n<cpu>\n<pci busid=\"\" class=\"0x030200\"/>\n</cpu>\n</system>") ==
        "t.xml:3: expected a PCI bus id like 0000:1b:00.0 in busid=, found \"\"");
  CHECK(error_of("<system>\n<cpu>\n<pci busid=\"0000:01:00.0\" link_width=\"x16\"/>\n</cpu>\n</system>") ==
        "t.xml:3: expected an integer in link_width=, found \"x16\"");
}

TEST_CASE("NCCL XML: an NVSwitch off the PCI tree, as NCCL dumps it in VMs", "[nccl-xml]") {
  const std::string text =
      "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\">\n"
      "<pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\">\n"
      "<gpu dev=\"0\" sm=\"90\"><nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/></gpu>\n"
      "</pci>\n</cpu>\n</system>\n";
  REQUIRE(error_of(text) == "");
  const Topology t = read_topology_text(text, "t.xml");
  REQUIRE(t.gpus.size() == 1);
  REQUIRE(t.gpus[0].nvlinks.size() == 1);
  CHECK(t.gpus[0].nvlinks[0].remote == NvLinkRemote::nvswitch);
  CHECK(t.gpus[0].nvlinks[0].remote_bus_id == kNvSwitchOffPciTree);
  CHECK(t.gpus[0].nvlinks[0].count == 18);
  // Only an NVSwitch link may name it: to a GPU it is still no bus id.
  std::string to_gpu = text;
  to_gpu.replace(to_gpu.find("0x068000"), 8, "0x030200");
  CHECK(error_of(to_gpu) ==
        "t.xml:4: expected a PCI bus id like 0000:1b:00.0 in target=, found \"fffffff:ff:ff.0\"");
}

TEST_CASE("NCCL XML: a file that cannot be read is an InputError naming it", "[nccl-xml][errors]") {
  CHECK_THROWS_AS(read_topology_file("/nonexistent/topo.xml"), autotune::InputError);
}

TEST_CASE("recorded: Azure ND H100 v5 skeleton", "[nccl-xml][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "nccl-xml/azure-ndv5-topo.xml");
  const Topology t = read_topology_file(path);
  REQUIRE(t.gpus.size() == 8);
  REQUIRE(t.nics.size() == 8);
  CHECK(t.numa_nodes == 2);
  CHECK(t.gpus[0].pci_bus_id == "0001:00:00.0");
  CHECK(t.gpus[3].pci_bus_id == "0008:00:00.0");
  CHECK(t.gpus[0].numa_node == 0);
  CHECK(t.gpus[7].numa_node == 1);
  CHECK(t.nics[0].pci_bus_id == "0101:00:00.0");
}

TEST_CASE("recorded: AWS p4d skeleton", "[nccl-xml][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "nccl-xml/aws-p4d-24xl-topo.xml");
  const Topology t = read_topology_file(path);
  REQUIRE(t.gpus.size() == 8);
  REQUIRE(t.nics.size() == 4);
  CHECK(t.gpus[0].name == "NVIDIA A100-SXM4-40GB");
  CHECK(t.gpus[0].sm == 80);
  CHECK(t.gpus[0].pci_bus_id == "0000:10:1c.0");
  CHECK(t.nics[0].model == "EFA");
  CHECK(t.nics[0].pci_bus_id == "0000:10:1b.0");
  CHECK(t.nics[3].numa_node == 1);
}

TEST_CASE("recorded: OCI bare-metal H100 full dump", "[nccl-xml][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "nccl-xml/oci-bm-gpu-h100-8-topo.xml");
  const Topology t = read_topology_file(path);
  REQUIRE(t.gpus.size() == 8);
  REQUIRE(t.nics.size() == 16);
  CHECK(t.nvswitch_seen);
  CHECK(t.nvswitches.size() == 4);
  CHECK(t.numa_nodes == 2);
  for (const Gpu& g : t.gpus) {
    CHECK(g.sm == 90);
    CHECK(g.nvlink_links() == 18);
  }
  CHECK(t.gpus[0].pci_bus_id == "0000:0f:00.0");
  CHECK(t.nics[0].name == "mlx5_0");
  CHECK(t.nics[0].pci_bus_id == "0000:0c:00.0");
  CHECK(t.nics[1].pci_bus_id == "0000:0c:00.0");
  CHECK(t.nics[0].model == "ConnectX-7");
}
