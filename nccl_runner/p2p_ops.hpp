#pragma once
// The point-to-point operations as nccl-tests runs them, on whatever libnccl the process loaded: alltoall
// through ncclAlltoAll, gather through ncclGather and scatter through ncclScatter where that library has them
// (NCCL 2.28+), else as nccl-tests did before: grouped ncclSend/ncclRecv to and from every peer (the root's
// peers for gather and scatter); sendrecv as one group of a send to rank+1 and a receive from rank-1. Every
// symbol is looked up weakly, so the runner module still loads on a library without them (an older NCCL),
// and such a measurement fails with the reason instead.

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <optional>
#include <string>

#include "nccl/operation.hpp"

namespace autotune::nccl_runner {

// Why the loaded libnccl cannot run `op`; nullopt when it can (always for a collective).
std::optional<std::string> p2p_unavailable(nccl::Operation op);

// One operation of `count` floats per peer (sendrecv: the count sent), rank `member` of `members`, root 0.
// `send` and `recv` as runners/collective_check.hpp's buffer counts lay them out.
ncclResult_t issue_p2p(nccl::Operation op, const void* send, void* recv, size_t count, int member,
                       int members, ncclComm_t comm, cudaStream_t stream);

}  // namespace autotune::nccl_runner
