#pragma once
// Copies, sets and host functions as stream work, and the virtual time each is charged: a launch cost plus
// the bytes at the bandwidth of the path (PCIe Gen5 for host<->device, HBM for device<->device). These
// figures only move the virtual clock; the data really moves, in host memory.

#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "tests/standin/cudart/stream_work.hpp"

namespace autotune::standin {

double copy_cost_us(cudaMemcpyKind kind, size_t bytes);
double set_cost_us(size_t bytes);

class CopyWork : public StreamWork {
 public:
  // With `stage`, the source is copied now (CUDA stages pageable host memory before the call returns).
  CopyWork(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, bool stage);
  double run(double start_us) noexcept override;

 private:
  void* dst_;
  const void* src_;
  size_t bytes_;
  double cost_us_;
  std::vector<char> staged_;
};

class SetWork : public StreamWork {
 public:
  SetWork(void* dst, int value, size_t bytes) : dst_(dst), value_(value), bytes_(bytes) {}
  double run(double start_us) noexcept override;

 private:
  void* dst_;
  int value_;
  size_t bytes_;
};

class HostFunctionWork : public StreamWork {
 public:
  HostFunctionWork(cudaHostFn_t fn, void* data) : fn_(fn), data_(data) {}
  double run(double start_us) noexcept override;

 private:
  cudaHostFn_t fn_;
  void* data_;
};

// Takes no time: the point a wait on an event is enqueued at.
class WaitWork : public StreamWork {
 public:
  double run(double start_us) noexcept override { return start_us; }
};

}  // namespace autotune::standin
