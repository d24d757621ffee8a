// NCCL's five collectives (README.md): arguments checked as NCCL checks them, plus what only a stand-in can
// check (the buffers lie in the communicator's device memory, the stream is on its device); the decision
// taken at launch (inside a group: at ncclGroupEnd) as NCCL takes it; the work put on the stream.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>

#include "nccl/vocabulary.hpp"
#include "tests/standin/cudart/stream_work.hpp"
#include "tests/standin/nccl/collective.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/group.hpp"
#include "tests/standin/nccl/handles.hpp"
#include "tests/standin/nccl/reduction.hpp"

using namespace autotune::standin;

namespace {

bool rooted(int collective) {
  return collective == kBroadcast || collective == kReduce;
}
bool reducing(int collective) {
  return collective != kBroadcast && collective != kAllGather;
}

ncclResult_t check_buffer(const void* p, size_t bytes, const CommState& c, const char* what) {
  if (bytes == 0 || cuda_ext::device_of(p, bytes) == c.device) return ncclSuccess;
  STANDIN_WARN("%s %p: not %zu bytes of CUDA device %d's memory (rank %d)", what, p, bytes, c.device, c.rank);
  return ncclInvalidArgument;
}

void log_choice(const CommState& c, const CollectiveCall& call, size_t bytes, const TunedChoice& t) {
  if (c.rank != 0 || !t.consulted || !log_enabled(kLogInfo, kTuning)) return;
  const auto a = autotune::nccl::algorithm_from_id(t.algorithm);
  const auto p = autotune::nccl::protocol_from_id(t.protocol);
  STANDIN_INFO(kTuning, "%s: %zu Bytes -> Algo %d proto %d time %f channels %d (%s/%s, %d ranks, %d node(s))",
               collective_name(call.collective), bytes, t.algorithm, t.protocol, t.estimate_us, t.channels,
               std::string(autotune::nccl::nccl_name(*a)).c_str(),
               std::string(autotune::nccl::nccl_name(*p)).c_str(), c.ranks, c.nodes);
}

ncclResult_t launch(const std::shared_ptr<CommState>& state, const CollectiveCall& call,
                    cudaStream_t stream) {
  CommState& c = *state;
  if (c.async_error() != ncclSuccess) return c.async_error();
  const int stream_device = cuda_ext::stream_device(stream);
  if (stream_device < 0) {
    STANDIN_WARN("Cuda failure 'invalid resource handle' (the stream)");
    return ncclUnhandledCudaError;
  }
  if (stream_device != c.device) {
    STANDIN_WARN("the stream is on CUDA device %d, the communicator (rank %d) on device %d", stream_device,
                 c.rank, c.device);
    return ncclInvalidUsage;
  }
  if (ncclResult_t r = check_buffer(call.send, send_bytes(call, c), c, "sendbuff"); r != ncclSuccess)
    return r;
  if (ncclResult_t r = check_buffer(call.recv, recv_bytes(call, c), c, "recvbuff"); r != ncclSuccess)
    return r;
  if (call.count == 0) return ncclSuccess;  // NCCL runs nothing and asks no tuner
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(stream, &status);
  TunedChoice choice;
  std::string why;
  const size_t bytes = tuner_bytes(call, c.ranks);
  if (int r =
          c.tuning->choose(call.collective, bytes, status == cudaStreamCaptureStatusActive, &choice, &why)) {
    STANDIN_WARN("%s", why.c_str());
    return static_cast<ncclResult_t>(r);
  }
  log_choice(c, call, bytes, choice);
  if (cudaError_t e = cuda_ext::enqueue(stream, std::make_shared<CollectiveWork>(state, call, choice));
      e != cudaSuccess) {
    STANDIN_WARN("Cuda failure '%s'", cudaGetErrorString(e));
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

ncclResult_t collective(const CollectiveCall& call, ncclComm_t comm, cudaStream_t stream) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (!state) {
    STANDIN_WARN("%s: invalid communicator %p", collective_name(call.collective), static_cast<void*>(comm));
    return group_error(ncclInvalidArgument);
  }
  if (element_size(call.type) == 0) {
    STANDIN_WARN("%s: datatype %d is not supported", collective_name(call.collective),
                 static_cast<int>(call.type));
    return group_error(ncclInvalidArgument);
  }
  if (reducing(call.collective) && !valid_op(call.op)) {
    STANDIN_WARN("%s: invalid reduction op %d", collective_name(call.collective), static_cast<int>(call.op));
    return group_error(ncclInvalidArgument);
  }
  if (rooted(call.collective) && (call.root < 0 || call.root >= state->ranks)) {
    STANDIN_WARN("%s: invalid root %d (root should be in the 0..%d range)", collective_name(call.collective),
                 call.root, state->ranks - 1);
    return group_error(ncclInvalidArgument);
  }
  return group_error(run_or_defer_collective([=] { return launch(state, call, stream); }));
}

}  // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective({kAllReduce, sendbuff, recvbuff, count, datatype, op, 0}, comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           int root, ncclComm_t comm, cudaStream_t stream) {
  return collective({kBroadcast, sendbuff, recvbuff, count, datatype, ncclSum, root}, comm, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return collective({kReduce, sendbuff, recvbuff, count, datatype, op, root}, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective({kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0}, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return collective({kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0}, comm, stream);
}

}  // extern "C"
