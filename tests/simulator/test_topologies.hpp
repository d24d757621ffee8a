#pragma once
// Nodes built in code, so the runner tests do not depend on the topology readers: an 8x H100 SXM node
// (18 NVLinks each to NVSwitches, 8 NDR NICs) and an 8x A100 PCIe node (no NVLink, 2 NICs).

#include <string>

#include "topology/model.hpp"

namespace autotune::test {

inline topology::Topology h100_node(int nics = 8, bool collnet = false) {
  topology::Topology t;
  t.origin = "test:h100-8x";
  for (int i = 0; i < 8; ++i) {
    topology::Gpu g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.sm = 90;
    g.link = {16, 32.0};
    topology::NvLink l;
    l.remote = topology::NvLinkRemote::nvswitch;
    l.count = 18;
    g.nvlinks.push_back(l);
    t.gpus.push_back(g);
  }
  for (int i = 0; i < 4; ++i) t.nvswitches.push_back({"0000:0" + std::to_string(i) + ":00.0"});
  for (int i = 0; i < nics; ++i) {
    topology::Nic n;
    n.name = "mlx5_" + std::to_string(i);
    n.collnet = collnet;
    topology::NicPort p;
    p.speed_gbps = 400;
    n.ports.push_back(p);
    t.nics.push_back(n);
  }
  return t;
}

inline topology::Topology a100_pcie_node() {
  topology::Topology t;
  t.origin = "test:a100-pcie-8x";
  for (int i = 0; i < 8; ++i) {
    topology::Gpu g;
    g.index = i;
    g.name = "NVIDIA A100-PCIE-40GB";
    g.sm = 80;
    g.link = {16, 16.0};
    t.gpus.push_back(g);
  }
  for (int i = 0; i < 2; ++i) {
    topology::Nic n;
    n.name = "mlx5_" + std::to_string(i);
    topology::NicPort p;
    p.speed_gbps = 200;
    n.ports.push_back(p);
    t.nics.push_back(n);
  }
  return t;
}

}  // namespace autotune::test
