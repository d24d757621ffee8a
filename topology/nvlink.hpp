#pragma once
// NVLink bandwidth per link by GPU generation (SM version), from NVIDIA's published figures as NCCL uses
// them.

namespace autotune::topology {

// GB/s per link and direction: sm 60: 18, 70/80: 20, 86: 12, 90: 20.6, 100: 40.1; 0 when unknown.
double nvlink_link_gbps(int sm);

}  // namespace autotune::topology
