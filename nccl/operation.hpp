#pragma once
// Everything a calibration can measure: NCCL's five collectives, which reach the tuner's getCollInfo, and the
// point-to-point operations, which never do (ncclAlltoAll, ncclGather, ncclScatter and grouped
// ncclSend/ncclRecv are scheduled as p2p; 2.29.7 makes no getCollInfo call for them). Point-to-point traffic
// is steered only by process-wide settings (NCCL_P2P_*_CHUNKSIZE, NCCL_NCHANNELS_PER_NET_PEER, PXN, ...), so
// no per-call rule can come of it: the names here are nccl-tests' test names without "_perf".

#include <array>
#include <optional>
#include <string_view>

#include "nccl/vocabulary.hpp"

namespace autotune::nccl {

enum class Operation : int {
  broadcast = 0,
  reduce = 1,
  allgather = 2,
  reducescatter = 3,
  allreduce = 4,  // 0..4: the same values as Collective
  alltoall = 5,
  sendrecv = 6,  // nccl-tests' sendrecv: each rank sends to rank+1 and receives from rank-1 in one group
  gather = 7,
  scatter = 8
};
inline constexpr int kNumOperations = 9;
inline constexpr std::array<Operation, 4> kPointToPointOperations = {Operation::alltoall, Operation::sendrecv,
                                                                     Operation::gather, Operation::scatter};

Operation to_operation(Collective c);
// The collective, or nullopt for a point-to-point operation (which has no tuner call and no rule).
std::optional<Collective> as_collective(Operation op);
bool is_point_to_point(Operation op);

// "alltoall", "sendrecv", or a collective's name; parsing is case-insensitive and takes NCCL's spellings
// ("AllToAll", "SendRecv") too.
std::string_view name(Operation op);
std::optional<Operation> parse_operation(std::string_view text);

// nccl-tests' bus bandwidth factor (busbw = algbw x factor for n ranks): alltoall, gather and scatter
// (n-1)/n, sendrecv 1; a collective's as bus_bandwidth_factor(Collective).
double bus_bandwidth_factor(Operation op, int ranks);

}  // namespace autotune::nccl
