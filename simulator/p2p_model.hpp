#pragma once
// The simulated truth of point-to-point traffic (alltoall, sendrecv, gather, scatter), which NCCL schedules
// outside its collective algorithms and steers only by process-wide settings, read as NCCL 2.28-2.30 reads
// them (src/init.cc computeBuffSizes, src/graph/paths.cc, src/graph/search.cc):
//  - the chunk each step moves: NCCL_P2P_NET_CHUNKSIZE (128 KiB) across nodes, NCCL_P2P_NVL_CHUNKSIZE
//    (512 KiB) inside an all-NVLink node, NCCL_P2P_PCI_CHUNKSIZE (128 KiB) otherwise, cut to NCCL_BUFFSIZE
//    (4 MiB) / 8 steps. Each step costs a fixed overhead, and a channel keeps at most 8 chunks in flight,
//    so a small chunk is bound by the round trip and a large one pays a longer pipeline fill;
//  - channels per network peer: NCCL_NCHANNELS_PER_NET_PEER, else NCCL's own (enough channels for the
//    GPU's NIC bandwidth, halved while peers / 8 rounds of them would not fit the p2p channels);
//  - PXN (NCCL_PXN_DISABLE=0 and NCCL_P2P_PXN_LEVEL > 0, the default): data for a remote GPU hops over
//    NVLink to the local GPU on that GPU's rail and leaves through that rail's NIC. Without it every GPU
//    sends through its own NIC, and on a rail-optimised fabric the traffic to other rails crosses the spine
//    (a quarter of its bandwidth lost, the model's figure for off-rail paths);
//  - NCCL_IB_QPS_PER_CONNECTION: more queue pairs spread a channel over more fabric paths (a few percent
//    each, up to 20%);
//  - NCCL_NET_GDR_LEVEL below the GPU-NIC distance (PIX) turns GPUDirect RDMA off: network data bounces
//    through host memory (kNoGdrShare of the network bandwidth left, for collectives too: sim_model applies
//    it to the links);
//  - NCCL_P2P_LEVEL=LOC (no P2P transport) sends intra-node traffic through host memory.
// Roughly: no published figure pins these down; the model exists so that a sweep of the settings has
// something with NCCL's shape to find, and is labelled simulated like everything else. Pure functions.

#include <cstdint>
#include <map>
#include <string>

#include "nccl/operation.hpp"
#include "simulator/hardware_model.hpp"
#include "simulator/sim_cluster.hpp"

namespace autotune::sim {

// What is left of the network bandwidth when GPUDirect RDMA is off.
inline constexpr double kNoGdrShare = 0.85;

struct P2pSettings {
  int64_t net_chunk = 1 << 17;
  int64_t nvl_chunk = 1 << 19;
  int64_t pci_chunk = 1 << 17;
  int64_t buffsize = 1 << 22;
  int channels_per_net_peer = 0;  // 0: NCCL decides
  bool pxn = true;
  int qps_per_connection = 1;
  bool gdr = true;        // GPUDirect RDMA to the NIC (NCCL_NET_GDR_LEVEL at or above PIX, or unset)
  bool p2p_intra = true;  // the P2P transport inside a node (NCCL_P2P_LEVEL other than LOC)
};

// The point-to-point settings of a process environment. Each value is checked as a profile's [env] is
// (nccl/env_policy.hpp); throws InputError("<env NAME>", 0, ...) for one NCCL would not take.
P2pSettings read_p2p_settings(const std::map<std::string, std::string>& env);
// The names read_p2p_settings looks at (the simulator's modelled_env_names includes them).
std::vector<std::string> p2p_env_names();

// The chunk NCCL's point-to-point steps move on this communicator.
int64_t p2p_chunk_bytes(const SimCluster& c, const P2pSettings& s);

// One rank's point-to-point traffic in one direction (what it sends, or what it receives): its peers inside
// the node and across the network, the bytes to each (the most any one of them gets), the share of the
// network peers on another rail than its own, and what it moves to itself (a device-local copy, charged
// only when it has no peer).
struct P2pTraffic {
  int intra_peers = 0;
  int net_peers = 0;
  double per_peer = 0.0;
  double off_rail_share = 0.0;
  double local_bytes = 0.0;
};

// The simulated time of one rank's traffic, microseconds: what p2p_time_us charges its busiest rank, for any
// pattern (the NCCL stand-in charges each rank's grouped ncclSend/ncclRecv with it).
double p2p_traffic_time_us(const SimCluster& c, const Links& links, const P2pSettings& s,
                           const P2pTraffic& t);

// The simulated time of one point-to-point operation of nccl-tests' size `bytes` (runners/bandwidth.hpp),
// microseconds: the busiest rank's (gather's and scatter's root). `links` as the faults and settings leave
// them (net_gbps per node for this communicator).
double p2p_time_us(const SimCluster& c, const Links& links, const P2pSettings& s, nccl::Operation op,
                   uint64_t bytes);

}  // namespace autotune::sim
