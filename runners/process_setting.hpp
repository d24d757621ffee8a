#pragma once
// A process-wide setting (NCCL_IB_HCA, NCCL_CROSS_NIC, ...) and a scale (nodes, ranks): the two coordinates
// of a calibration that cannot change inside one communicator. NCCL caches process-wide variables on first
// use, so each setting is its own job; each scale is its own (sub-)communicator inside a job.

#include <map>
#include <string>

namespace autotune::runners {

struct ProcessSetting {
  std::string id;  // "default", "hca=mlx5_0,mlx5_1", "cross_nic=1"; unique in a calibration
  std::map<std::string, std::string> env;  // empty for "default": NCCL's own settings
  bool is_default() const { return env.empty(); }
  bool operator==(const ProcessSetting&) const = default;
};

// Whether the setting can change a one-node communicator: false when every variable it sets only acts on
// traffic between nodes (NCCL_IB_HCA, NCCL_CROSS_NIC, the network's point-to-point chunk, channels per
// network peer, PXN, queue pairs, GPUDirect RDMA), which a communicator inside one node never has; its
// one-node shapes are then measured once, under the first setting, and count for it.
bool reaches_one_node(const ProcessSetting& setting);

// Whether the setting is made of point-to-point settings alone (nccl::is_point_to_point_env_key): such a job
// is judged for [env] by search/p2p_setting.hpp, never chosen as the rules' setting.
bool only_point_to_point(const ProcessSetting& setting);

// A communicator's shape: nodes x ranks per node, as training jobs create them (tensor-parallel groups inside
// a node, pipeline and data-parallel groups with one rank per node across nodes). `ranks` is the whole
// communicator; a calibrated shape is even (ranks divisible by nodes).
struct Scale {
  int nodes = 1;
  int ranks = 1;
  int ranks_per_node() const { return nodes > 0 ? ranks / nodes : 0; }
  bool operator==(const Scale&) const = default;
  auto operator<=>(const Scale&) const = default;
};

// "4x8": nodes x ranks per node; for people, "4x8 (32 ranks)".
std::string shape_text(const Scale& s);
std::string describe_shape(const Scale& s);

}  // namespace autotune::runners
