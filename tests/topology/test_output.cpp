#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_helpers.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/output.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;

TEST_CASE("JSON has the documented shape", "[output]") {
  const Topology t = load_example("h100-8x");
  const Analysis a = analyze(t);
  const auto j = nlohmann::json::parse(to_json({t, a, fingerprint(t, 228)}));
  CHECK(j["schema"] == 1);
  REQUIRE(j["gpus"].size() == 8);
  CHECK(j["gpus"][0]["index"] == 0);
  CHECK(j["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3");
  CHECK(j["gpus"][0]["pci_bus_id"] == "0000:19:00.0");
  CHECK(j["gpus"][0]["numa_node"] == 0);
  CHECK(j["gpus"][0]["sm"] == 90);
  CHECK(j["gpus"][0]["nvlink_links"] == 18);
  REQUIRE(j["nics"].size() == 8);
  CHECK(j["nics"][0]["name"] == "mlx5_0");
  CHECK(j["nics"][0]["ports"][0]["state"] == "ACTIVE");
  CHECK(j["nics"][0]["ports"][0]["link_layer"] == "InfiniBand");
  CHECK(j["nics"][0]["ports"][0]["speed_gbps"] == 400.0);
  CHECK(j["paths"].size() == 64);
  CHECK(j["paths"][0] == nlohmann::json({{"gpu", 0}, {"nic", "mlx5_0"}, {"type", "PIX"}}));
  CHECK(j["paths"][7]["pxn_via"] == 7);
  CHECK(j["nvswitch"] == true);
  CHECK(j["features"]["nvls"]["status"] == "available");
  CHECK(j["features"]["collnet"]["status"] == "unknown");
  CHECK(j["features"]["gdr"]["evidence"].get<std::string>().find("gdr=1") != std::string::npos);
  CHECK(j["health"].empty());
  CHECK(j["fingerprint"] == fingerprint(t, 228));
  CHECK(j["sources"][0]["name"] == "file:example:h100-8x");
}

TEST_CASE("text output: matrix, features, fingerprint", "[output]") {
  const Topology t = load_example("a100-pcie-8x");
  const Analysis a = analyze(t);
  const std::string text = to_text({t, a, "0123456789abcdef"});
  CHECK(text.find("GPU0    PIX      SYS") != std::string::npos);
  CHECK(text.find("NVLS:    not available: GPUs are sm 80") != std::string::npos);
  CHECK(text.find("fingerprint: 0123456789abcdef") != std::string::npos);
  CHECK(text.find("NCCL_IB_HCA==mlx5_0:1,mlx5_1:1") != std::string::npos);
}

TEST_CASE("NCCL XML output reads back as the same node", "[output]") {
  for (const std::string name : {"h100-8x", "a100-pcie-8x"}) {
    const Topology t = load_example(name);
    const Topology back = read_topology_text(to_nccl_xml(t), "roundtrip.xml");
    CHECK(fingerprint(back, 228) == fingerprint(t, 228));
    REQUIRE(back.gpus.size() == t.gpus.size());
    CHECK(back.gpus[3].pci_bus_id == t.gpus[3].pci_bus_id);
    CHECK(back.nics.size() == t.nics.size());
    const Analysis a = analyze(t), b = analyze(back);
    for (size_t i = 0; i < a.paths.size(); ++i) CHECK(a.paths[i].type == b.paths[i].type);
  }
}

TEST_CASE("recorded: OCI dump survives an NCCL XML round trip", "[output][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "nccl-xml/oci-bm-gpu-h100-8-topo.xml");
  const Topology t = read_topology_file(path);
  const Topology back = read_topology_text(to_nccl_xml(t), "roundtrip.xml");
  CHECK(back.nics.size() == 16);
  CHECK(fingerprint(back, 228) == fingerprint(t, 228));
}

TEST_CASE("recorded: NVLinks to the CPU survive an NCCL XML round trip (POWER8)", "[output][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "hwloc-xml/hwloc-power8gpudistances.xml");
  const Topology t = read_topology_file(path);
  const std::string xml = to_nccl_xml(t);
  // NCCL's class for a link to the CPU, and no target NCCL would read there.
  CHECK(xml.find("tclass=\"0x068001\"") != std::string::npos);
  const Topology back = read_topology_text(xml, "roundtrip.xml");
  REQUIRE(back.gpus.size() == t.gpus.size());
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    INFO("GPU " << i);
    CHECK(back.gpus[i].nvlink_links() == t.gpus[i].nvlink_links());  // 4: two to the peer, two to the CPU
    const auto to_cpu = [](const Gpu& g) {
      return std::count_if(g.nvlinks.begin(), g.nvlinks.end(),
                           [](const NvLink& l) { return l.remote == NvLinkRemote::cpu; });
    };
    CHECK(to_cpu(back.gpus[i]) == to_cpu(t.gpus[i]));
    CHECK(back.gpus[i].name == t.gpus[i].name);
  }
  CHECK(fingerprint(back, 228) == fingerprint(t, 228));
}

TEST_CASE("recorded: NVLinks keep their order through an NCCL XML round trip (OCI)", "[output][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "nccl-xml/oci-bm-gpu-h100-8-topo.xml");
  const Topology t = read_topology_file(path);
  const Topology back = read_topology_text(to_nccl_xml(t), "roundtrip.xml");
  REQUIRE(back.gpus.size() == t.gpus.size());
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    REQUIRE(back.gpus[i].nvlinks.size() == t.gpus[i].nvlinks.size());
    for (size_t k = 0; k < t.gpus[i].nvlinks.size(); ++k) {
      CHECK(back.gpus[i].nvlinks[k].remote_bus_id == t.gpus[i].nvlinks[k].remote_bus_id);
      CHECK(back.gpus[i].nvlinks[k].count == t.gpus[i].nvlinks[k].count);
    }
  }
}

TEST_CASE("NCCL XML output keeps NUMA nodes that hold no GPU or NIC", "[output]") {
  Topology t = load_example("h100-8x");
  t.numa_nodes = 4;  // two more sockets' worth of NUMA nodes with nothing PCI on them
  const std::string xml = to_nccl_xml(t);
  const Topology back = read_topology_text(xml, "roundtrip.xml");
  CHECK(back.numa_nodes == 4);
  CHECK(fingerprint(back, 228) == fingerprint(t, 228));
}

TEST_CASE("text output: a long source name stays apart from its detail", "[output]") {
  const Topology t = read_topology_file(test::own_fixture("nccl-full.xml"));
  const std::string text = to_text({t, analyze(t), "0123456789abcdef"});
  const std::string name = "file:" + test::own_fixture("nccl-full.xml").string();
  REQUIRE(name.size() > 18);
  CHECK(text.find("  " + name + "  NCCL topology XML (full dump)") != std::string::npos);
}

TEST_CASE("text output: a skeleton with several NICs does not say one NIC or none", "[output]") {
  std::string nics;
  for (int i = 0; i < 4; ++i)
    nics += "<pci busid=\"0000:1" + std::to_string(i) +
            ":00.0\" class=\"0x020700\" vendor=\"0x15b3\" device=\"0x1021\"/>";
  const Topology t = read_topology_text(
      "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\" "
      "vendor=\"0x10de\" device=\"0x2330\"/>" +
          nics + "</cpu></system>",
      "skeleton.xml");
  REQUIRE(t.nics.size() == 4);
  const Analysis a = analyze(t);
  const std::string text = to_text({t, a, "0123456789abcdef"});
  CHECK(text.find("one NIC or none") == std::string::npos);
  CHECK(a.sweep_cross_nic);
}
