#pragma once
// NCCL's topology search as the simulator models it (src/graph/search.cc, ncclTopoCompute): how many ring
// and tree channels NCCL finds on a simulated cluster, at what bandwidth per channel and over which kind of
// link, and how many channels the communicator then runs (src/graph/connect.cc doubles the search's). The
// tuning model (nccl_tuning.hpp) reads its bandwidths from here, and SimCluster::max_channels is its channel
// count. A reduced search: every channel of a ring or tree takes its bandwidth from each GPU's links
// once per direction (NVLink to an NVSwitch, or the PCIe link and the link between CPU sockets), as NCCL's
// search charges them, instead of NCCL's path-by-path recursion. Pure functions.

#include "simulator/sim_cluster.hpp"

namespace autotune::sim {

// One graph NCCL's search returns (struct ncclTopoGraph, the fields tuning reads).
struct NcclGraph {
  int channels = 0;
  double bw_intra = 0.0;  // GB/s per channel inside a node
  double bw_inter = 0.0;  // GB/s per channel across nodes (bw_intra on one node)
  bool nvlink = false;    // typeIntra is NVLink (NCCL's hardware latencies for NVLink, else PCI)
  bool same_channels = true;
};

struct NcclSearch {
  NcclGraph ring, tree;
  // NVLS's graph, approximated (never held to real NCCL: the stand-in driver has no multicast): one channel
  // per GPU of the node, each at the fastest speed all of them fit in the GPU's NVLink; none without NVLS.
  NcclGraph nvls;
  int comm_channels = 1;  // comm->nChannels after connect.cc's doubling, before NCCL_MAX_NCHANNELS
};

// The search over `c` (its GPUs per node, nodes, links and NICs). One GPU per communicator: one channel.
NcclSearch search_graphs(const SimCluster& c);

}  // namespace autotune::sim
