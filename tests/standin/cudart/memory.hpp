#pragma once
// Device memory in host RAM: every cudaMalloc is an aligned block of this process's memory tagged with its
// device, so copies, sets and NCCL's buffers are checked against what was really allocated (where a GPU would
// fault, the call fails with CUDA's error instead). Pinned host memory (cudaMallocHost) is tracked too:
// asynchronous copies from pageable memory are staged, from pinned memory they are not, as in CUDA.
// Thread-safe.

#include <cstddef>
#include <optional>

#include <cuda_runtime_api.h>

namespace autotune::standin {

struct Allocation {
  char* base = nullptr;
  size_t size = 0;
  int device = -1;  // -1: pinned host memory
};

// Device memory: cudaErrorMemoryAllocation past the device's memory.
cudaError_t allocate_device(int device, size_t bytes, void** out);
cudaError_t allocate_pinned(size_t bytes, void** out);
// cudaErrorInvalidValue for a pointer that is not the start of a live allocation of that kind.
cudaError_t free_device(void* p);
cudaError_t free_pinned(void* p);
// The allocation that holds all of [p, p + bytes); nullopt when none does.
std::optional<Allocation> find_allocation(const void* p, size_t bytes);
// memset, but zeroing the whole pages of an allocation by dropping them (the kernel gives them back as
// zero pages on next touch): NCCL zeroes gigabytes of buffers it never touches here, which first-touch page
// faults made the slowest part of communicator set-up, and would have kept them resident.
void fill(void* dst, int value, size_t bytes);
// Bytes allocated on `device`, for cudaMemGetInfo.
size_t allocated_on(int device);

}  // namespace autotune::standin
