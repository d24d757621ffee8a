#pragma once
// The simulated truth's hardware: what a collective really moves over a probed cluster, fitted to published
// nccl-tests figures (simulator/published/points.csv, `ctest -L fidelity`), not NCCL's own estimate of it.
//  - Per GPU generation: the share of the NVLink line rate a ring reaches (Hopper 82%, Ampere 77.5%).
//  - NVLS all-reduce scales with the GPUs on the switch (no gain up to 4, then 420/440/460/480 GB/s on 5-8
//    H100), and is ring's rate for all-gather and reduce-scatter.
//  - Across nodes the GPUs also feed the network: 85% of their one-node rate, and the NICs bound the rest by
//    the bytes each node really sends: a ring's busbw is at most the node's NIC bandwidth, a tree on two
//    nodes sends each byte once per direction, so its busbw can exceed the NICs' line rate (nccl-tests issue
//    196), a tree on more nodes sends half again as much.
//  - Protocols: LL carries 8 bytes for 4 of data, LL128 120 of 128; fewer channels than the fabric needs
//    move less.
//  - Pipeline fill: NCCL's chunks grow with the message, and so does the cost of filling and draining the
//    pipeline, up to 53 MB more moved per rank (110 us on 8x H200 NVLS; half of it at 100 MB moved).
// Every figure is capped by what the links can carry (max_busbw_gbps). Pure functions: thread-safe.

#include "nccl/vocabulary.hpp"
#include "simulator/sim_cluster.hpp"

namespace autotune::sim {

// The links a communicator has, as the faults and process settings leave them.
struct Links {
  double intra_line_gbps = 0.0;  // per GPU, one direction: NVLink line rate (or the PCIe link's)
  double intra_scale = 1.0;      // what a fault leaves of it (1 healthy)
  double net_gbps = 0.0;         // per node into the network, payload rate (0 on one node)
};

// Busbw in GB/s of a large message over all `channels` (0: the communicator's maximum) with `protocol`:
// the truth before the pipeline fill and latency.
double true_peak_busbw(const SimCluster& c, const Links& links, nccl::Collective coll, nccl::Algorithm a,
                       nccl::Protocol p, int channels);

// What the links can carry at most, in nccl-tests busbw: one GPU's NVLink (or PCIe) line rate for a ring,
// scaled by the busbw convention where an algorithm moves less than a ring (NVLS, trees on two nodes,
// CollNet); the nodes' NIC line rates likewise.
double max_busbw_gbps(const SimCluster& c, const Links& links, nccl::Collective coll, nccl::Algorithm a);

// What filling and draining the pipeline costs for a message of `bytes`, in bytes moved per rank at the
// collective's busbw (so slower links pay it slower).
double pipeline_fill_bytes(nccl::Collective coll, int ranks, uint64_t bytes);

}  // namespace autotune::sim
