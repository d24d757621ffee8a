#pragma once
// What the CUDA stand-in offers the NCCL stand-in beyond CUDA's own API: GPU work of its own kind (a
// collective) put in a stream's order like a kernel, run on the stream's worker thread and charged on the
// stream's virtual GPU clock; and the device memory behind a pointer, which NCCL checks its buffers against.
// Exported from libcudart.so.13 under the same version node as CUDA's functions. Thread-safe.

#include <cstddef>
#include <memory>

#include <cuda_runtime_api.h>

namespace autotune::standin {

class StreamWork {
 public:
  virtual ~StreamWork() = default;
  // Runs once everything enqueued before it on the stream has completed; `start_us` is the stream's virtual
  // time then. Returns the virtual time at which the work completed (>= start_us). May block for as long as
  // the work takes (a collective waits for its peers, a hung one until its communicator is aborted): the
  // stream does not move on before it returns. Called again for every launch of a graph that captured it.
  virtual double run(double start_us) noexcept = 0;
};

namespace cuda_ext {

// Puts `work` on `stream` (0, cudaStreamLegacy, cudaStreamPerThread or a created stream) as a kernel launch
// would: after everything enqueued before it, or into the graph being captured. Fails as a launch would: an
// invalid stream, a capture already invalidated.
cudaError_t enqueue(cudaStream_t stream, std::shared_ptr<StreamWork> work);

// The device whose cudaMalloc'ed memory holds all of [p, p + bytes); -1 when no single allocation does.
int device_of(const void* p, size_t bytes);

// The device a stream belongs to (the current device for 0 and the special handles); -1 for an invalid one.
int stream_device(cudaStream_t stream);

}  // namespace cuda_ext
}  // namespace autotune::standin
