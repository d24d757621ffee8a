// NCCL's point-to-point API (README.md): ncclSend and ncclRecv, checked as NCCL checks them (the peer as
// NCCL checks a root, the datatype) plus what only a stand-in can check (the buffer lies in the
// communicator's device memory, the stream is on its device), at the call, so that a group returns the error
// from that call and again from ncclGroupEnd; and NCCL 2.28's ncclAlltoAll, ncclGather and ncclScatter,
// which NCCL builds from grouped sends and receives, as here. None reaches the tuner, as in NCCL.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>

#include "tests/standin/cudart/stream_work.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/group.hpp"
#include "tests/standin/nccl/handles.hpp"
#include "tests/standin/nccl/reduction.hpp"

using namespace autotune::standin;

namespace {

// Bytes per element as NCCL moves them: the FP8 types too (only reductions need to model a type).
size_t p2p_element_size(ncclDataType_t type) {
  if (type == ncclFloat8e4m3 || type == ncclFloat8e5m2) return 1;
  return element_size(type);
}

ncclResult_t check_stream(cudaStream_t stream, const CommState& c, const char* name) {
  const int device = cuda_ext::stream_device(stream);
  if (device < 0) {
    STANDIN_WARN("%s : Cuda failure 'invalid resource handle' (the stream)", name);
    return ncclUnhandledCudaError;
  }
  if (device != c.device) {
    STANDIN_WARN("%s : the stream is on CUDA device %d, the communicator (rank %d) on device %d", name,
                 device, c.rank, c.device);
    return ncclInvalidUsage;
  }
  return ncclSuccess;
}

// One send or receive of `count` elements: checked, then launched or added to the group.
ncclResult_t p2p(const char* name, bool send, const void* buff, size_t count, ncclDataType_t type, int peer,
                 ncclComm_t comm, cudaStream_t stream) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (!state) {
    STANDIN_WARN("%s : invalid communicator %p", name, static_cast<void*>(comm));
    return group_error(ncclInvalidArgument);
  }
  CommState& c = *state;
  if (peer < 0 || peer >= c.ranks) {
    STANDIN_WARN("%s : invalid root %d (root should be in the 0..%d range)", name, peer, c.ranks);
    return group_error(ncclInvalidArgument);
  }
  const size_t e = p2p_element_size(type);
  if (e == 0) {
    STANDIN_WARN("%s : invalid type %d", name, static_cast<int>(type));
    return group_error(ncclInvalidArgument);
  }
  if (ncclResult_t r = check_stream(stream, c, name); r != ncclSuccess) return group_error(r);
  if (count == 0) return ncclSuccess;  // nothing moves, and no peer waits for it
  if (cuda_ext::device_of(buff, count * e) != c.device) {
    STANDIN_WARN("%s : %s %p: not %zu bytes of CUDA device %d's memory (rank %d)", name,
                 send ? "sendbuff" : "recvbuff", buff, count * e, c.device, c.rank);
    return group_error(ncclInvalidArgument);
  }
  const P2pOp op{send, static_cast<char*>(const_cast<void*>(buff)), count * e, peer};
  return group_error(run_or_defer_p2p(state, stream, op));
}

// The operations NCCL builds from sends and receives: one group, so they are fused and run together.
template <typename Body>
ncclResult_t grouped(Body body) {
  group_start();
  const ncclResult_t r = body();
  const ncclResult_t end = group_end();
  return r != ncclSuccess ? r : end;
}

// The communicator's size and the root check of ncclGather and ncclScatter; 0 ranks on an invalid one.
int checked_ranks(const char* name, ncclComm_t comm, int root) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (!state) {
    STANDIN_WARN("%s : invalid communicator %p", name, static_cast<void*>(comm));
    return 0;
  }
  if (root < 0 || root >= state->ranks) {
    STANDIN_WARN("%s : invalid root %d (root should be in the 0..%d range)", name, root, state->ranks);
    return 0;
  }
  return state->ranks;
}

const char* at(const void* base, int block, size_t count, ncclDataType_t type) {
  return static_cast<const char*>(base) + static_cast<size_t>(block) * count * p2p_element_size(type);
}

}  // namespace

extern "C" {

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return p2p("Send", true, sendbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return p2p("Recv", false, recvbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) {
  const int ranks = checked_ranks("AlltoAll", comm, 0);
  if (ranks == 0) return group_error(ncclInvalidArgument);
  return grouped([&] {
    for (int peer = 0; peer < ranks; ++peer) {
      if (ncclResult_t r =
              p2p("AlltoAll", true, at(sendbuff, peer, count, datatype), count, datatype, peer, comm, stream);
          r != ncclSuccess)
        return r;
      if (ncclResult_t r = p2p("AlltoAll", false, at(recvbuff, peer, count, datatype), count, datatype, peer,
                               comm, stream);
          r != ncclSuccess)
        return r;
    }
    return ncclSuccess;
  });
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  const int ranks = checked_ranks("Gather", comm, root);
  if (ranks == 0) return group_error(ncclInvalidArgument);
  const int me = lookup(comm)->rank;
  return grouped([&] {
    for (int peer = 0; me == root && peer < ranks; ++peer)
      if (ncclResult_t r =
              p2p("Gather", false, at(recvbuff, peer, count, datatype), count, datatype, peer, comm, stream);
          r != ncclSuccess)
        return r;
    return p2p("Gather", true, sendbuff, count, datatype, root, comm, stream);
  });
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                         int root, ncclComm_t comm, cudaStream_t stream) {
  const int ranks = checked_ranks("Scatter", comm, root);
  if (ranks == 0) return group_error(ncclInvalidArgument);
  const int me = lookup(comm)->rank;
  return grouped([&] {
    for (int peer = 0; me == root && peer < ranks; ++peer)
      if (ncclResult_t r =
              p2p("Scatter", true, at(sendbuff, peer, count, datatype), count, datatype, peer, comm, stream);
          r != ncclSuccess)
        return r;
    return p2p("Scatter", false, recvbuff, count, datatype, root, comm, stream);
  });
}

}  // extern "C"
