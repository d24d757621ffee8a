// CUDA runtime entry points for memory: allocation in host RAM, copies and sets, synchronous ones through
// the legacy default stream (see README.md for the list).
#include <cuda_runtime_api.h>

#include <memory>

#include "tests/standin/common/devices.hpp"
#include "tests/standin/cudart/copy_work.hpp"
#include "tests/standin/cudart/errors.hpp"
#include "tests/standin/cudart/memory.hpp"
#include "tests/standin/cudart/streams.hpp"

using namespace autotune::standin;

namespace {

bool on_device(const void* p, size_t bytes) {
  auto a = find_allocation(p, bytes);
  return a && a->device >= 0;
}

bool pinned(const void* p, size_t bytes) {
  auto a = find_allocation(p, bytes);
  return a && a->device < 0;
}

// The direction a copy really takes; cudaErrorInvalidValue when a side said to be on the device is not
// (inside one allocation, for the whole length).
cudaError_t check_copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                       cudaMemcpyKind* resolved) {
  if (bytes > 0 && (dst == nullptr || src == nullptr)) return cudaErrorInvalidValue;
  const bool dst_dev = on_device(dst, bytes), src_dev = on_device(src, bytes);
  switch (kind) {
    case cudaMemcpyHostToDevice:
      if (!dst_dev) return cudaErrorInvalidValue;
      break;
    case cudaMemcpyDeviceToHost:
      if (!src_dev) return cudaErrorInvalidValue;
      break;
    case cudaMemcpyDeviceToDevice:
      if (!dst_dev || !src_dev) return cudaErrorInvalidValue;
      break;
    case cudaMemcpyHostToHost:
      break;
    case cudaMemcpyDefault:
      kind = dst_dev ? (src_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                     : (src_dev ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
      break;
    default:
      return cudaErrorInvalidMemcpyDirection;
  }
  *resolved = kind;
  return cudaSuccess;
}

cudaError_t copy_async(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
                       MarkerPtr* done) {
  if (devices().empty()) return cudaErrorNoDevice;
  cudaMemcpyKind resolved{};
  if (cudaError_t e = check_copy(dst, src, bytes, kind, &resolved); e != cudaSuccess) return e;
  cudaError_t e = cudaSuccess;
  StreamPtr s = resolve_stream(stream, &e);
  if (!s) return e;
  const bool stage = resolved == cudaMemcpyHostToDevice && !pinned(src, bytes);
  return submit(s, std::make_shared<CopyWork>(dst, src, bytes, resolved, stage), {}, done);
}

cudaError_t set_async(void* dst, int value, size_t bytes, cudaStream_t stream, MarkerPtr* done) {
  if (devices().empty()) return cudaErrorNoDevice;
  if (bytes > 0 && !on_device(dst, bytes)) return cudaErrorInvalidValue;
  cudaError_t e = cudaSuccess;
  StreamPtr s = resolve_stream(stream, &e);
  if (!s) return e;
  return submit(s, std::make_shared<SetWork>(dst, value, bytes), {}, done);
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
  if (devices().empty()) return returned(cudaErrorNoDevice);
  if (cudaError_t e = check_unsafe_call(); e != cudaSuccess) return returned(e);
  return returned(allocate_device(current_device(), size, ptr));
}

cudaError_t cudaFree(void* ptr) {
  if (cudaError_t e = check_unsafe_call(); e != cudaSuccess) return returned(e);
  // As CUDA's, it waits for the device's work first: nothing still running may write to freed memory.
  if (auto a = find_allocation(ptr, 0); a && a->device >= 0) synchronize_device(a->device);
  return returned(free_device(ptr));
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return returned(allocate_pinned(size, ptr));
}
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) {
  return returned(allocate_pinned(size, ptr));
}
cudaError_t cudaFreeHost(void* ptr) {
  return returned(free_pinned(ptr));
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  return returned(copy_async(dst, src, count, kind, stream, nullptr));
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (cudaError_t e = check_unsafe_call(); e != cudaSuccess) return returned(e);
  MarkerPtr done;
  if (cudaError_t e = copy_async(dst, src, count, kind, cudaStreamLegacy, &done); e != cudaSuccess)
    return returned(e);
  wait_marker(done);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t stream) {
  return returned(set_async(dst, value, count, stream, nullptr));
}

cudaError_t cudaMemset(void* dst, int value, size_t count) {
  if (cudaError_t e = check_unsafe_call(); e != cudaSuccess) return returned(e);
  MarkerPtr done;
  if (cudaError_t e = set_async(dst, value, count, cudaStreamLegacy, &done); e != cudaSuccess)
    return returned(e);
  wait_marker(done);
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return returned(cudaErrorInvalidValue);
  *attributes = cudaPointerAttributes{};
  auto a = find_allocation(ptr, 0);
  if (!a) {
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = -2;
  } else if (a->device >= 0) {
    attributes->type = cudaMemoryTypeDevice;
    attributes->device = a->device;
    attributes->devicePointer = const_cast<void*>(ptr);
  } else {
    attributes->type = cudaMemoryTypeHost;
    attributes->device = current_device();
    attributes->hostPointer = const_cast<void*>(ptr);
    attributes->devicePointer = const_cast<void*>(ptr);
  }
  return cudaSuccess;
}

}  // extern "C"
