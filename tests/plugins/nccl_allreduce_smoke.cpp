// A real NCCL program for the GPU check (gpu_plugin_check.sh): one process, every local GPU through
// ncclCommInitAll, a few AllReduces of different sizes, results verified. Exits 77 with "no CUDA device: ..."
// where there is no usable GPU, so ctest reports a skip rather than a failure.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <vector>

namespace {

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool nccl_ok(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(r));
  return false;
}

}  // namespace

int main() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("no CUDA device: %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0");
    return 77;
  }
  std::vector<ncclComm_t> comms(n);
  std::vector<int> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  if (!nccl_ok(ncclCommInitAll(comms.data(), n, devs.data()), "ncclCommInitAll")) return 1;

  const size_t sizes[] = {1024, 1 << 20, 16 << 20};  // elements of float
  const size_t max_count = 16 << 20;
  std::vector<float*> buf(n);
  std::vector<cudaStream_t> streams(n);
  for (int i = 0; i < n; ++i) {
    if (!cuda_ok(cudaSetDevice(i), "cudaSetDevice") ||
        !cuda_ok(cudaMalloc(&buf[i], max_count * sizeof(float)), "cudaMalloc") ||
        !cuda_ok(cudaStreamCreate(&streams[i]), "cudaStreamCreate"))
      return 1;
  }
  int failures = 0;
  for (size_t count : sizes) {
    for (int i = 0; i < n; ++i) {
      std::vector<float> host(count, static_cast<float>(i + 1));
      cudaSetDevice(i);
      if (!cuda_ok(cudaMemcpy(buf[i], host.data(), count * sizeof(float), cudaMemcpyHostToDevice),
                   "cudaMemcpy"))
        return 1;
    }
    if (!nccl_ok(ncclGroupStart(), "ncclGroupStart")) return 1;
    for (int i = 0; i < n; ++i)
      if (!nccl_ok(ncclAllReduce(buf[i], buf[i], count, ncclFloat, ncclSum, comms[i], streams[i]),
                   "ncclAllReduce"))
        return 1;
    if (!nccl_ok(ncclGroupEnd(), "ncclGroupEnd")) return 1;
    const float expected = n * (n + 1) / 2.0f;
    for (int i = 0; i < n; ++i) {
      cudaSetDevice(i);
      if (!cuda_ok(cudaStreamSynchronize(streams[i]), "cudaStreamSynchronize")) return 1;
      std::vector<float> host(count);
      cudaMemcpy(host.data(), buf[i], count * sizeof(float), cudaMemcpyDeviceToHost);
      for (size_t k = 0; k < count; ++k)
        if (host[k] != expected) {
          ++failures;
          break;
        }
    }
    std::printf("allreduce %zu floats on %d GPUs: %s\n", count, n, failures ? "WRONG" : "ok");
  }
  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    cudaFree(buf[i]);
    cudaStreamDestroy(streams[i]);
    ncclCommDestroy(comms[i]);
  }
  return failures ? 1 : 0;
}
