#include <catch2/catch.hpp>

#include "test_helpers.hpp"
#include "topology/analysis.hpp"
#include "topology/examples.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;
namespace nccl = autotune::nccl;

namespace {
PathType path_of(const Analysis& a, int gpu, const std::string& nic) {
  for (const auto& p : a.paths)
    if (p.gpu == gpu && p.nic == nic) return p.type;
  FAIL("no path " << gpu << " -> " << nic);
  return PathType::sys;
}
}  // namespace

TEST_CASE("path types follow NCCL's definitions", "[analysis]") {
  const std::vector<PciAncestor> sw_a{{"hb", false}, {"0000:01:00.0", true}, {"0000:02:00.0", true}};
  const std::vector<PciAncestor> sw_b{{"hb", false}, {"0000:01:00.0", true}, {"0000:03:00.0", true}};
  const std::vector<PciAncestor> root_c{{"hb", false}, {"0000:00:02.0", true}};
  CHECK(pci_path_type(sw_a, 0, sw_a, 0) == PathType::pix);
  CHECK(pci_path_type(sw_a, 0, sw_b, 0) == PathType::pxb);
  CHECK(pci_path_type(sw_a, 0, root_c, 0) == PathType::phb);
  CHECK(pci_path_type(sw_a, 0, {}, 0) == PathType::phb);
  CHECK(pci_path_type(sw_a, 0, {}, 1) == PathType::sys);
  CHECK(path_name(PathType::pxn) == "PXN");
}

TEST_CASE("h100-8x: rails, NVSwitch, NVLS, sweep suggestions", "[analysis]") {
  const Analysis a = analyze(load_example("h100-8x"));
  REQUIRE(a.paths.size() == 64);
  for (int g = 0; g < 8; ++g) {
    CHECK(path_of(a, g, "mlx5_" + std::to_string(g)) == PathType::pix);
    CHECK(a.nearest_nics[static_cast<size_t>(g)] == std::vector<std::string>{"mlx5_" + std::to_string(g)});
  }
  CHECK(path_of(a, 0, "mlx5_1") == PathType::phb);
  CHECK(path_of(a, 0, "mlx5_7") == PathType::sys);
  // GPU 0 reaches mlx5_7 through NVLink to GPU 7 (PXN).
  for (const auto& p : a.paths)
    if (p.gpu == 0 && p.nic == "mlx5_7") {
      CHECK(p.best == PathType::pxn);
      CHECK(p.pxn_via == 7);
    }
  CHECK(a.rail_aligned);
  CHECK(a.rails.size() == 8);
  CHECK(a.nvlink_shape == NvLinkShape::nvswitch);
  CHECK(a.nvswitch);
  CHECK(a.nvlink_gbps[0] == Approx(18 * 20.6));
  CHECK(a.nvls.status == FeatureStatus::available);
  CHECK(a.collnet.status == FeatureStatus::unknown);
  CHECK(a.gdr.status == FeatureStatus::available);
  CHECK(a.health.empty());
  REQUIRE(a.ib_hca_candidates.size() == 2);
  CHECK(a.ib_hca_candidates[0] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1");
  CHECK(a.ib_hca_candidates[1] == "=mlx5_0:1,mlx5_4:1");
  CHECK(a.sweep_cross_nic);
  CHECK(a.algorithms == std::vector<nccl::Algorithm>{nccl::Algorithm::tree, nccl::Algorithm::ring,
                                                     nccl::Algorithm::collnet_direct,
                                                     nccl::Algorithm::collnet_chain, nccl::Algorithm::nvls,
                                                     nccl::Algorithm::nvls_tree});
}

TEST_CASE("a100-pcie-8x: no NVLink, no NVLS, not rail-aligned", "[analysis]") {
  const Analysis a = analyze(load_example("a100-pcie-8x"));
  CHECK(a.nvlink_shape == NvLinkShape::none);
  CHECK(a.nvls.status == FeatureStatus::not_available);
  CHECK(a.nvls.evidence.find("sm 80") != std::string::npos);
  CHECK_FALSE(a.rail_aligned);
  CHECK(path_of(a, 0, "mlx5_0") == PathType::pix);
  CHECK(path_of(a, 2, "mlx5_0") == PathType::phb);
  CHECK(path_of(a, 4, "mlx5_0") == PathType::sys);
  CHECK(a.ib_hca_candidates == std::vector<std::string>{"=mlx5_0:1,mlx5_1:1"});
}

TEST_CASE("health: degraded PCIe link, down port, down NVLink, mixed models", "[analysis][health]") {
  Topology t = read_topology_file(test::own_fixture("nccl-full.xml"));
  Analysis a = analyze(t);
  REQUIRE(a.health.size() == 1);
  CHECK(a.health[0].kind == "pcie_width_degraded");
  CHECK(a.health[0].severity == Severity::block);
  CHECK(a.health[0].device == "GPU1 (0000:8b:00.0)");
  CHECK(a.health[0].reading == "PCIe x8 at 16 GT/s, maximum x16 at 16 GT/s");
  CHECK(a.health[0].source == "topology file (" + test::own_fixture("nccl-full.xml").string() + ")");
  CHECK(a.nvlink_shape == NvLinkShape::all_to_all);
  t.nics[0].ports[0].state = "DOWN";
  t.gpus[0].nvlinks[0].up = false;
  t.gpus[1].name = "NVIDIA H100 80GB HBM3";
  a = analyze(t);
  std::vector<std::string> kinds;
  for (const auto& h : a.health) kinds.push_back(h.kind);
  CHECK(kinds ==
        std::vector<std::string>{"nvlink_down", "pcie_width_degraded", "mixed_gpu_models", "nic_not_active"});
  CHECK(a.health[3].message ==
        "mlx5_0 has no ACTIVE port (port 1 DOWN): cable, switch port or subnet manager");
  CHECK_FALSE(may_calibrate(a.health));
}

TEST_CASE("recorded: Azure ND H100 v5, every GPU has exactly one NIC at PIX", "[analysis][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "nccl-xml/azure-ndv5-topo.xml");
  const Topology t = read_topology_file(path);
  const Analysis a = analyze(t);
  for (const auto& g : t.gpus) {
    int pix = 0;
    for (const auto& p : a.paths)
      if (p.gpu == g.index && p.type == PathType::pix) ++pix;
    CHECK(pix == 1);
  }
  CHECK(a.rail_aligned);
  CHECK(a.nvls.status == FeatureStatus::not_available);  // a skeleton shows no NVSwitch
}

TEST_CASE("recorded: hwloc 32em64t, the ConnectX-4 is PIX to the GPU with cuda0", "[analysis][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "hwloc-xml/hwloc-32em64t-2n8c2t-pci-normalio.xml");
  const Topology t = read_topology_file(path);
  const Analysis a = analyze(t);
  REQUIRE(t.gpus[0].index == 0);
  CHECK(path_of(a, 0, "mlx5_0") == PathType::pix);
  CHECK(path_of(a, 1, "mlx5_0") != PathType::pix);
  CHECK(a.collnet.status != FeatureStatus::available);
}

TEST_CASE("recorded: OCI H100, flattened Broadcom switches make GPU-NIC pairs PIX", "[analysis][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "nccl-xml/oci-bm-gpu-h100-8-topo.xml");
  const Analysis a = analyze(read_topology_file(path));
  CHECK(path_of(a, 0, "mlx5_0") == PathType::pix);
  CHECK(path_of(a, 0, "mlx5_1") == PathType::pix);
  CHECK(a.nvlink_shape == NvLinkShape::nvswitch);
  CHECK(a.nvls.status == FeatureStatus::available);
  CHECK(a.rail_aligned);
  CHECK(a.nearest_nics[0] == std::vector<std::string>{"mlx5_0", "mlx5_1"});
}

TEST_CASE("recorded: POWER8 P100 NVLink is partial (pairs), no NVSwitch", "[analysis][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(path, "hwloc-xml/hwloc-power8gpudistances.xml");
  const Topology t = read_topology_file(path);
  const Analysis a = analyze(t);
  CHECK(a.nvlink_shape == NvLinkShape::partial);
  CHECK_FALSE(a.nvswitch);
  CHECK(t.gpus[0].nvlink_links() > 0);
}
