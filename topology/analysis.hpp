#pragma once
// What a Topology means for collectives: the PCI path type of every GPU-NIC pair (NCCL's names), nearest NICs
// and rails, the NVLink shape, which of NVLS / CollNet / GPUDirect RDMA can be proven (with the evidence that
// decided), health findings that should stop a calibration, and what the sweep should try. Pure function of
// the model: thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "nccl/vocabulary.hpp"
#include "topology/fabric_setup.hpp"
#include "topology/health.hpp"
#include "topology/model.hpp"

namespace autotune::topology {

// Nearest first, as NCCL orders them. nvl: over NVLink; pix: through at most one PCIe switch; pxb: through
// several switches but not the host bridge; pxn: through an NVLink peer GPU that is PIX/PXB to the NIC; phb:
// through the CPU's host bridge (same NUMA node); sys: across NUMA nodes (the inter-socket link).
enum class PathType { nvl, pix, pxb, pxn, phb, sys };
std::string_view path_name(PathType t);  // "NVL", "PIX", "PXB", "PXN", "PHB", "SYS"

struct GpuNicPath {
  int gpu = 0;       // Gpu::index
  std::string nic;   // Nic::name
  PathType type{};   // the PCI path: pix, pxb, phb or sys
  PathType best{};   // type, or pxn where an NVLink peer is PIX/PXB to the NIC and the PCI path is phb/sys
  int pxn_via = -1;  // that peer's index
};

struct Rail {
  int gpu = 0;
  std::vector<std::string> nics;  // the GPU's own NICs at PIX/PXB
};

enum class NvLinkShape { none, nvswitch, all_to_all, partial };
std::string_view shape_name(NvLinkShape s);  // "none", "nvswitch", "all-to-all", "partial"

enum class FeatureStatus { available, not_available, unknown };
std::string_view status_name(FeatureStatus s);  // "available", "not available", "unknown"

struct Feature {
  FeatureStatus status = FeatureStatus::unknown;
  std::string evidence;  // what decided it, in a sentence
};

struct Analysis {
  std::vector<GpuNicPath> paths;                       // every GPU x NIC pair, GPU-major
  std::vector<std::vector<std::string>> nearest_nics;  // per GPU (by position in Topology::gpus)
  std::vector<Rail> rails;                             // filled when rail_aligned
  bool rail_aligned = false;  // every GPU has its own PIX/PXB NIC(s), shared with no other GPU
  NvLinkShape nvlink_shape = NvLinkShape::none;
  bool nvswitch = false;
  std::vector<double> nvlink_gbps;  // per GPU: links x per-link GB/s of its SM version (0 when unknown)
  Feature nvls;
  Feature collnet;
  Feature gdr;
  std::vector<HealthFinding> health;  // topology/health.hpp
  FabricSetup fabric;                 // NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME (topology/fabric_setup.hpp)
  // For the sweep.
  std::vector<std::string> ib_hca_candidates;  // NCCL_IB_HCA values, distinct, most inclusive first
  bool sweep_cross_nic = false;                // more than one usable NIC
  std::vector<nccl::Algorithm> algorithms;     // what the node can run, in NCCL's order (tree, ring, ...)
};

Analysis analyze(const Topology& topology);

// The PCI path type between two devices' PCI paths and NUMA nodes (exposed for tests and the simulator).
PathType pci_path_type(const std::vector<PciAncestor>& a, int numa_a, const std::vector<PciAncestor>& b,
                       int numa_b);

}  // namespace autotune::topology
