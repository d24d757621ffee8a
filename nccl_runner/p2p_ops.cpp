#include "nccl_runner/p2p_ops.hpp"

#include "runners/collective_check.hpp"

// Weak: a library without them leaves the address null (an NCCL before 2.28 has no ncclAlltoAll).
#pragma weak ncclSend
#pragma weak ncclRecv
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#pragma weak ncclAlltoAll
#pragma weak ncclGather
#pragma weak ncclScatter
#define AUTOTUNE_HAVE_NCCL_ALLTOALL 1
#else
#define AUTOTUNE_HAVE_NCCL_ALLTOALL 0
#endif

namespace autotune::nccl_runner {

namespace {

using nccl::Operation;

bool have_send_recv() {
  return &ncclSend != nullptr && &ncclRecv != nullptr;
}

bool have_native(Operation op) {
#if AUTOTUNE_HAVE_NCCL_ALLTOALL
  switch (op) {
    case Operation::alltoall:
      return &ncclAlltoAll != nullptr;
    case Operation::gather:
      return &ncclGather != nullptr;
    case Operation::scatter:
      return &ncclScatter != nullptr;
    default:
      return false;
  }
#else
  (void)op;
  return false;
#endif
}

const float* at(const void* base, size_t block, size_t count) {
  return static_cast<const float*>(base) + block * count;
}

float* at(void* base, size_t block, size_t count) {
  return static_cast<float*>(base) + block * count;
}

// nccl-tests' grouped form: the root (gather: receiving, scatter: sending) exchanges a block with every
// rank, itself included; alltoall: every rank with every rank.
ncclResult_t grouped(Operation op, const void* send, void* recv, size_t count, int member, int members,
                     ncclComm_t comm, cudaStream_t stream) {
  const int root = runners::kCheckRoot;
  if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
  ncclResult_t r = ncclSuccess;
  for (int peer = 0; peer < members && r == ncclSuccess; ++peer) {
    const size_t p = static_cast<size_t>(peer);
    if (op == Operation::alltoall) {
      r = ncclSend(at(send, p, count), count, ncclFloat32, peer, comm, stream);
      if (r == ncclSuccess) r = ncclRecv(at(recv, p, count), count, ncclFloat32, peer, comm, stream);
    } else if (op == Operation::gather && member == root) {
      r = ncclRecv(at(recv, p, count), count, ncclFloat32, peer, comm, stream);
    } else if (op == Operation::scatter && member == root) {
      r = ncclSend(at(send, p, count), count, ncclFloat32, peer, comm, stream);
    }
  }
  if (r == ncclSuccess && op == Operation::gather) r = ncclSend(send, count, ncclFloat32, root, comm, stream);
  if (r == ncclSuccess && op == Operation::scatter)
    r = ncclRecv(recv, count, ncclFloat32, root, comm, stream);
  const ncclResult_t end = ncclGroupEnd();
  return r != ncclSuccess ? r : end;
}

}  // namespace

std::optional<std::string> p2p_unavailable(Operation op) {
  if (!nccl::is_point_to_point(op) || have_native(op) || have_send_recv()) return std::nullopt;
  return "the loaded libnccl has no ncclSend/ncclRecv" +
         std::string(op == Operation::sendrecv ? "" : " nor nccl" + std::string(nccl::name(op))) +
         " to run " + std::string(nccl::name(op)) + " with";
}

ncclResult_t issue_p2p(Operation op, const void* send, void* recv, size_t count, int member, int members,
                       ncclComm_t comm, cudaStream_t stream) {
#if AUTOTUNE_HAVE_NCCL_ALLTOALL
  if (have_native(op)) {
    if (op == Operation::alltoall) return ncclAlltoAll(send, recv, count, ncclFloat32, comm, stream);
    if (op == Operation::gather)
      return ncclGather(send, recv, count, ncclFloat32, runners::kCheckRoot, comm, stream);
    return ncclScatter(send, recv, count, ncclFloat32, runners::kCheckRoot, comm, stream);
  }
#endif
  if (op != Operation::sendrecv) return grouped(op, send, recv, count, member, members, comm, stream);
  if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
  ncclResult_t r = ncclSend(send, count, ncclFloat32, (member + 1) % members, comm, stream);
  if (r == ncclSuccess)
    r = ncclRecv(recv, count, ncclFloat32, (member + members - 1) % members, comm, stream);
  const ncclResult_t end = ncclGroupEnd();
  return r != ncclSuccess ? r : end;
}

}  // namespace autotune::nccl_runner
