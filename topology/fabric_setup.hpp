#pragma once
// The fabric settings a node needs that NCCL cannot be trusted to guess: which RoCE GID index to use
// (NCCL_IB_GID_INDEX) and which interface its sockets should use (NCCL_SOCKET_IFNAME). Both are chosen from
// the probe's readings as NCCL would weigh them, with the evidence in words; health findings report what
// stands in the way (topology/health.hpp). Pure functions of the model: thread-safe.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topology/model.hpp"

namespace autotune::topology {

// What a RoCE port's GID table offers, judged as NCCL does (net_ib.cc, NCCL 2.21+): it wants a RoCE v2 GID
// whose address is IPv4-mapped (::ffff:a.b.c.d, NCCL_IB_ADDR_FAMILY defaults to AF_INET) and not link-local.
enum class RoceGids {
  v2_ipv4,          // at least one such GID
  ipv6_only,        // RoCE v2 GIDs, but only IPv6 ones (NCCL would need NCCL_IB_ADDR_FAMILY=AF_INET6)
  v1_only,          // routable GIDs, but only RoCE v1 ones
  link_local_only,  // only fe80:: GIDs (no IP address on the interface)
  unknown,          // no GIDs read, or the kernel did not say their types
};
RoceGids classify_roce_gids(const NicPort& port);
// The indices of the port's RoCE v2 GIDs with an IPv4-mapped address, ascending.
std::vector<int> v2_ipv4_gid_indices(const NicPort& port);

struct FabricSetup {
  // NCCL_IB_GID_INDEX: the smallest index that is a RoCE v2 IPv4-mapped GID on every active RoCE port of
  // the node; absent when there is no RoCE port or no such common index.
  std::optional<int> gid_index;
  std::string gid_evidence;
  // NCCL_SOCKET_IFNAME, as an exact name ("=eth0"): an interface that is up and has an address, never the
  // loopback or a container or VM bridge; IPoIB first (NCCL's own preference), then the one holding the
  // default route, then the lowest interface index.
  std::optional<std::string> socket_ifname;
  std::string socket_evidence;
  // What NCCL picks by itself when NCCL_SOCKET_IFNAME is unset (ib* first, then anything but docker*, lo,
  // virbr*, in interface order), where it can be told from the readings.
  std::optional<std::string> nccl_default_interface;

  // The settings above as [env] entries (only those that were found).
  std::map<std::string, std::string> env() const;
};

// Empty (nothing found, evidence saying why) when health was not read.
FabricSetup choose_fabric_setup(const Topology& topology);

// Whether an interface name is a container or VM bridge, a veth or an overlay (docker0, virbr0, cni0,
// veth..., br-..., flannel.1, cali..., ...): never a way to other nodes.
bool is_container_interface(const std::string& name);

}  // namespace autotune::topology
