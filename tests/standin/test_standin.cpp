// The stand-ins through their C APIs, in this process (linked to them instead of the real libraries): CUDA's
// stream, event, capture and error semantics, and NCCL's communicators, groups, splits, collectives and the
// checks only a stand-in can make. The end-to-end runs of the binary are the *_check.sh scripts.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void require_cuda(cudaError_t e) {
  REQUIRE(std::string(cudaGetErrorName(e)) == "cudaSuccess");
}
void require_nccl(ncclResult_t r) {
  REQUIRE(std::string(ncclGetErrorString(r)) == "no error");
}

// Communicators on GPUs 0..n-1 with a non-blocking stream each.
struct Ranks {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  explicit Ranks(int n) : comms(static_cast<size_t>(n)), streams(static_cast<size_t>(n)) {
    require_nccl(ncclCommInitAll(comms.data(), n, nullptr));
    for (int i = 0; i < n; ++i) {
      require_cuda(cudaSetDevice(i));
      require_cuda(cudaStreamCreateWithFlags(&streams[static_cast<size_t>(i)], cudaStreamNonBlocking));
    }
  }
  ~Ranks() {
    for (size_t i = 0; i < comms.size(); ++i) {
      if (comms[i]) ncclCommAbort(comms[i]);
      cudaStreamDestroy(streams[i]);
    }
  }
};

float* device_floats(int device, const std::vector<float>& values) {
  cudaSetDevice(device);
  void* p = nullptr;
  require_cuda(cudaMalloc(&p, values.size() * sizeof(float)));
  require_cuda(cudaMemcpy(p, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
  return static_cast<float*>(p);
}

std::vector<float> host_floats(const float* p, size_t n) {
  std::vector<float> out(n);
  require_cuda(cudaMemcpy(out.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

// Values of the datatypes NCCL reduces, as bytes (the test's values are exact in every one of them).
size_t element_bytes(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclFloat32:
      return 4;
    default:
      return 8;
  }
}

template <typename T>
void put(std::vector<unsigned char>& out, T v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float bits_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

void append(std::vector<unsigned char>& out, ncclDataType_t t, double v) {
  const uint32_t b = float_bits(static_cast<float>(v));
  switch (t) {
    case ncclInt8:
      return put(out, static_cast<int8_t>(v));
    case ncclInt32:
      return put(out, static_cast<int32_t>(v));
    case ncclInt64:
      return put(out, static_cast<int64_t>(v));
    case ncclFloat32:
      return put(out, static_cast<float>(v));
    case ncclBfloat16:
      return put(out, static_cast<uint16_t>(b >> 16));
    case ncclFloat16:  // normal numbers only: sign, exponent rebased from 127 to 15, top 10 mantissa bits
      return put(out,
                 static_cast<uint16_t>(v == 0 ? 0
                                              : ((b >> 16) & 0x8000u) | ((((b >> 23) & 0xffu) - 112) << 10) |
                                                    ((b >> 13) & 0x3ffu)));
    default:
      return put(out, v);
  }
}

double element(const std::vector<unsigned char>& in, ncclDataType_t t, size_t k) {
  const unsigned char* p = in.data() + k * element_bytes(t);
  auto get = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case ncclInt8:
      return get(int8_t{});
    case ncclInt32:
      return get(int32_t{});
    case ncclInt64:
      return static_cast<double>(get(int64_t{}));
    case ncclFloat32:
      return get(float{});
    case ncclBfloat16:
      return bits_float(static_cast<uint32_t>(get(uint16_t{})) << 16);
    case ncclFloat16: {
      const uint32_t h = get(uint16_t{});
      return h == 0 ? 0.0
                    : bits_float(((h & 0x8000u) << 16) | ((((h >> 10) & 0x1fu) + 112) << 23) |
                                 ((h & 0x3ffu) << 13));
    }
    default:
      return get(double{});
  }
}

// The communicator's asynchronous error once it has one (collectives fail on the stream), or ncclSuccess
// after two seconds without one.
ncclResult_t await_async_error(ncclComm_t comm) {
  ncclResult_t async = ncclSuccess;
  for (int k = 0; k < 200 && async == ncclSuccess; ++k) {
    require_nccl(ncclCommGetAsyncError(comm, &async));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return async;
}

}  // namespace

TEST_CASE("CUDA stand-in: the devices of the recorded node, and CUDA's errors for misuse",
          "[standin][cuda]") {
  int n = 0;
  require_cuda(cudaGetDeviceCount(&n));
  CHECK(n == 8);  // the h100-8x example
  cudaDeviceProp prop{};
  require_cuda(cudaGetDeviceProperties(&prop, 0));
  CHECK(std::string(prop.name) == "NVIDIA H100 80GB HBM3");
  CHECK(prop.major * 10 + prop.minor == 90);

  CHECK(cudaSetDevice(8) == cudaErrorInvalidDevice);
  CHECK(std::string(cudaGetErrorString(cudaGetLastError())) == "invalid device ordinal");
  CHECK(cudaGetLastError() == cudaSuccess);  // taking it resets it
  int on_stack = 0;
  CHECK(cudaFree(&on_stack) == cudaErrorInvalidValue);
  void* p = nullptr;
  require_cuda(cudaSetDevice(0));
  require_cuda(cudaMalloc(&p, 1024));
  std::vector<char> host(2048);
  CHECK(cudaMemcpy(p, host.data(), 2048, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);  // past its end
  CHECK(cudaMemcpy(host.data(), p, 16, cudaMemcpyHostToDevice) ==
        cudaErrorInvalidValue);  // not device memory
  cudaStream_t s = nullptr;
  require_cuda(cudaStreamCreate(&s));
  require_cuda(cudaStreamDestroy(s));
  CHECK(cudaStreamSynchronize(s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaGetErrorString(static_cast<cudaError_t>(12345)) == std::string("unrecognized error code"));
  require_cuda(cudaFree(p));
}

TEST_CASE("CUDA stand-in: events time a stream's work on the virtual clock", "[standin][cuda]") {
  require_cuda(cudaSetDevice(0));
  cudaStream_t s = nullptr;
  require_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b, c, untimed;
  require_cuda(cudaEventCreate(&a));
  require_cuda(cudaEventCreate(&b));
  require_cuda(cudaEventCreate(&c));
  require_cuda(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  float ms = 0;
  CHECK(cudaEventQuery(a) == cudaSuccess);  // never recorded: nothing to wait for
  CHECK(cudaEventElapsedTime(&ms, a, b) == cudaErrorInvalidResourceHandle);
  void* p = nullptr;
  require_cuda(cudaMalloc(&p, 64 << 20));
  require_cuda(cudaEventRecord(a, s));
  require_cuda(cudaMemsetAsync(p, 1, 1 << 20, s));
  require_cuda(cudaEventRecord(b, s));
  require_cuda(cudaMemsetAsync(p, 1, 64 << 20, s));
  require_cuda(cudaEventRecord(c, s));
  require_cuda(cudaEventRecord(untimed, s));
  require_cuda(cudaStreamSynchronize(s));
  float small = 0, large = 0;
  require_cuda(cudaEventElapsedTime(&small, a, b));
  require_cuda(cudaEventElapsedTime(&large, b, c));
  CHECK(small > 0.0f);
  CHECK(large > 10 * small);  // 64 times the bytes at the same bandwidth, plus the same launch cost
  CHECK(cudaEventElapsedTime(&ms, a, untimed) == cudaErrorInvalidResourceHandle);
  unsigned char first = 0;
  require_cuda(cudaMemcpy(&first, p, 1, cudaMemcpyDeviceToHost));
  CHECK(first == 1);
  for (auto e : {a, b, c, untimed}) require_cuda(cudaEventDestroy(e));
  require_cuda(cudaFree(p));
  require_cuda(cudaStreamDestroy(s));
}

TEST_CASE("CUDA stand-in: stream capture records work and each graph launch runs it again",
          "[standin][cuda]") {
  require_cuda(cudaSetDevice(1));
  cudaStream_t s = nullptr;
  require_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* counter = nullptr;
  require_cuda(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof(int)));
  require_cuda(cudaMemset(counter, 0, sizeof(int)));
  std::vector<int> seen;
  struct Host {
    static void bump(void* v) { static_cast<std::vector<int>*>(v)->push_back(1); }
  };
  require_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cudaStreamCaptureStatus status{};
  require_cuda(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusActive);
  require_cuda(cudaMemsetAsync(counter, 7, 1, s));
  require_cuda(cudaLaunchHostFunc(s, Host::bump, &seen));
  cudaGraph_t graph = nullptr;
  require_cuda(cudaStreamEndCapture(s, &graph));
  CHECK(seen.empty());  // captured, not run
  cudaGraphExec_t exec = nullptr;
  require_cuda(cudaGraphInstantiate(&exec, graph, 0));
  require_cuda(cudaGraphLaunch(exec, s));
  require_cuda(cudaGraphLaunch(exec, s));
  require_cuda(cudaStreamSynchronize(s));
  CHECK(seen.size() == 2);
  int value = 0;
  require_cuda(cudaMemcpy(&value, counter, sizeof value, cudaMemcpyDeviceToHost));
  CHECK((value & 0xff) == 7);

  // A synchronous call inside a capture is refused and the capture invalidated.
  require_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported);
  cudaGraph_t broken = nullptr;
  CHECK(cudaStreamEndCapture(s, &broken) == cudaErrorStreamCaptureInvalidated);
  CHECK(broken == nullptr);
  require_cuda(cudaGraphExecDestroy(exec));
  require_cuda(cudaGraphDestroy(graph));
  require_cuda(cudaFree(counter));
  require_cuda(cudaStreamDestroy(s));
}

TEST_CASE("NCCL stand-in: a collective stays incomplete until its communicator is aborted",
          "[standin][nccl]") {
  Ranks r(2);
  const size_t n = 1024;
  float* buf = device_floats(0, std::vector<float>(n, 1.0f));
  cudaEvent_t done;
  require_cuda(cudaSetDevice(0));
  require_cuda(cudaEventCreate(&done));
  // Rank 1 never joins this AllReduce: rank 0's waits for it, as on GPUs.
  require_nccl(ncclAllReduce(buf, buf, n, ncclFloat32, ncclSum, r.comms[0], r.streams[0]));
  require_cuda(cudaEventRecord(done, r.streams[0]));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(cudaEventQuery(done) == cudaErrorNotReady);
  ncclResult_t async = ncclInternalError;
  require_nccl(ncclCommGetAsyncError(r.comms[0], &async));
  CHECK(async == ncclSuccess);
  require_nccl(ncclCommAbort(r.comms[0]));
  r.comms[0] = nullptr;
  require_cuda(cudaEventSynchronize(done));  // the stream moves on past the aborted collective
  require_cuda(cudaEventDestroy(done));
  cudaFree(buf);
}

TEST_CASE("NCCL stand-in: ncclCommSplit in a group from one thread, sub-communicators at once",
          "[standin][nccl]") {
  Ranks world(8);
  std::vector<ncclComm_t> sub(8, nullptr);
  require_nccl(ncclGroupStart());
  for (int i = 0; i < 8; ++i)  // even and odd ranks, each half in reverse order; rank 7 in none
    require_nccl(ncclCommSplit(world.comms[static_cast<size_t>(i)], i == 7 ? NCCL_SPLIT_NOCOLOR : i % 2, -i,
                               &sub[static_cast<size_t>(i)], nullptr));
  require_nccl(ncclGroupEnd());
  CHECK(sub[7] == nullptr);
  for (int i = 0; i < 7; ++i) {
    int count = 0, rank = 0;
    require_nccl(ncclCommCount(sub[static_cast<size_t>(i)], &count));
    require_nccl(ncclCommUserRank(sub[static_cast<size_t>(i)], &rank));
    CHECK(count == (i % 2 == 0 ? 4 : 3));
    CHECK(rank == (i % 2 == 0 ? (6 - i) / 2 : (5 - i) / 2));
  }
  // Both groups' AllReduces in one group call: each sums its own members' values.
  std::vector<float*> bufs;
  for (int i = 0; i < 7; ++i)
    bufs.push_back(device_floats(i, std::vector<float>(4096, static_cast<float>(i))));
  require_nccl(ncclGroupStart());
  for (int i = 0; i < 7; ++i)
    require_nccl(ncclAllReduce(bufs[static_cast<size_t>(i)], bufs[static_cast<size_t>(i)], 4096, ncclFloat32,
                               ncclSum, sub[static_cast<size_t>(i)], world.streams[static_cast<size_t>(i)]));
  require_nccl(ncclGroupEnd());
  for (int i = 0; i < 7; ++i) {
    cudaSetDevice(i);
    require_cuda(cudaStreamSynchronize(world.streams[static_cast<size_t>(i)]));
    CHECK(host_floats(bufs[static_cast<size_t>(i)], 4096)[4095] == (i % 2 == 0 ? 0 + 2 + 4 + 6 : 1 + 3 + 5));
    cudaFree(bufs[static_cast<size_t>(i)]);
    require_nccl(ncclCommDestroy(sub[static_cast<size_t>(i)]));
  }
}

TEST_CASE("NCCL stand-in: ranks that issue different collectives fail on every rank, each side named",
          "[standin][nccl]") {
  Ranks r(2);
  float* a = device_floats(0, std::vector<float>(64, 1.0f));
  float* b = device_floats(1, std::vector<float>(64, 1.0f));
  require_nccl(ncclGroupStart());
  require_nccl(ncclAllReduce(a, a, 16, ncclFloat32, ncclSum, r.comms[0], r.streams[0]));
  require_nccl(ncclAllReduce(b, b, 32, ncclFloat32, ncclSum, r.comms[1], r.streams[1]));
  require_nccl(ncclGroupEnd());
  for (ncclComm_t c : r.comms) CHECK(await_async_error(c) == ncclInvalidUsage);
  const std::string last = ncclGetLastError(r.comms[0]);
  CHECK(last.find("ranks disagree: rank 0 AllReduce 16 x float32 sum root 0 (") != std::string::npos);
  CHECK(last.find(", rank 1 AllReduce 32 x float32 sum root 0 (") != std::string::npos);
  // The failed collectives stay incomplete until aborted, and cudaFree waits for the device's work.
  for (auto& c : r.comms) require_nccl(ncclCommAbort(c)), c = nullptr;
  cudaFree(a);
  cudaFree(b);
}

TEST_CASE("NCCL stand-in: arguments are checked as NCCL checks them, and buffers against device memory",
          "[standin][nccl]") {
  Ranks r(2);
  std::vector<float> host(16);
  float* dev = device_floats(0, host);
  CHECK(ncclAllReduce(host.data(), dev, 16, ncclFloat32, ncclSum, r.comms[0], r.streams[0]) ==
        ncclInvalidArgument);
  CHECK(std::string(ncclGetLastError(r.comms[0])).find("sendbuff") != std::string::npos);
  CHECK(ncclBroadcast(dev, dev, 16, ncclFloat32, 2, r.comms[0], r.streams[0]) == ncclInvalidArgument);
  CHECK(ncclAllReduce(dev, dev, 16, ncclFloat8e4m3, ncclSum, r.comms[0], r.streams[0]) ==
        ncclInvalidArgument);
  CHECK(ncclAllReduce(dev, dev, 16, ncclFloat32, ncclSum, r.comms[0], r.streams[1]) == ncclInvalidUsage);
  CHECK(ncclGroupEnd() == ncclInvalidUsage);
  ncclUniqueId foreign;
  std::memset(&foreign, 7, sizeof foreign);
  ncclComm_t c = nullptr;
  CHECK(ncclCommInitRank(&c, 2, foreign, 0) == ncclInvalidArgument);
  cudaFree(dev);
}

TEST_CASE("NCCL stand-in: every datatype and op reduces as the GPU would", "[standin][nccl]") {
  Ranks r(3);
  struct Case {
    ncclDataType_t type;
    ncclRedOp_t op;
    std::vector<double> expected;  // from the inputs {rank + 1, -(rank + 1), 0.5 * (rank + 1)} of ranks 0..2
  };
  const std::vector<Case> cases = {
      {ncclInt32, ncclSum, {6, -6, 2}},   {ncclInt64, ncclProd, {6, -6, 0}},
      {ncclInt8, ncclMax, {3, -1, 1}},    {ncclFloat64, ncclMin, {1, -3, 0.5}},
      {ncclFloat16, ncclSum, {6, -6, 3}}, {ncclBfloat16, ncclAvg, {2, -2, 1}},
      {ncclFloat32, ncclAvg, {2, -2, 1}},
  };
  for (const auto& c : cases) {
    CAPTURE(static_cast<int>(c.type), static_cast<int>(c.op));
    std::vector<void*> bufs(3);
    for (int i = 0; i < 3; ++i) {
      std::vector<unsigned char> bytes;
      for (double v : {i + 1.0, -(i + 1.0), 0.5 * (i + 1)}) append(bytes, c.type, v);
      cudaSetDevice(i);
      require_cuda(cudaMalloc(&bufs[static_cast<size_t>(i)], bytes.size()));
      require_cuda(
          cudaMemcpy(bufs[static_cast<size_t>(i)], bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    }
    require_nccl(ncclGroupStart());
    for (int i = 0; i < 3; ++i)
      require_nccl(ncclAllReduce(bufs[static_cast<size_t>(i)], bufs[static_cast<size_t>(i)], 3, c.type, c.op,
                                 r.comms[static_cast<size_t>(i)], r.streams[static_cast<size_t>(i)]));
    require_nccl(ncclGroupEnd());
    for (int i = 0; i < 3; ++i) {
      cudaSetDevice(i);
      require_cuda(cudaStreamSynchronize(r.streams[static_cast<size_t>(i)]));
    }
    std::vector<unsigned char> out(3 * element_bytes(c.type));
    require_cuda(cudaMemcpy(out.data(), bufs[2], out.size(), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < 3; ++k) CHECK(element(out, c.type, k) == c.expected[k]);
    for (auto* b : bufs) cudaFree(b);
  }
}

namespace {

// Rank r's block b: values no other rank and block share.
std::vector<float> block_values(int rank, int block, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(rank * 1000000 + block * 10000 + static_cast<int>(i % 9973));
  return v;
}

void synchronize_all(Ranks& r) {
  for (size_t i = 0; i < r.streams.size(); ++i) {
    cudaSetDevice(static_cast<int>(i));
    require_cuda(cudaStreamSynchronize(r.streams[i]));
  }
}

}  // namespace

TEST_CASE("NCCL stand-in: grouped sends and receives match per peer in call order and move the data",
          "[standin][nccl][p2p]") {
  Ranks r(3);
  // Each rank sends two messages to the next rank (the second larger than a lane's slot) and one to itself.
  const size_t small = 1000, large = 1000000;
  std::vector<float*> sends, recvs;
  for (int i = 0; i < 3; ++i) {
    std::vector<float> all = block_values(i, 0, small);
    const std::vector<float> second = block_values(i, 1, large), self = block_values(i, 2, small);
    all.insert(all.end(), second.begin(), second.end());
    all.insert(all.end(), self.begin(), self.end());
    sends.push_back(device_floats(i, all));
    recvs.push_back(device_floats(i, std::vector<float>(all.size(), -1.0f)));
  }
  require_nccl(ncclGroupStart());
  for (int i = 0; i < 3; ++i) {
    const size_t u = static_cast<size_t>(i);
    const int next = (i + 1) % 3, prev = (i + 2) % 3;
    require_nccl(ncclSend(sends[u], small, ncclFloat32, next, r.comms[u], r.streams[u]));
    require_nccl(ncclRecv(recvs[u] + small + large, small, ncclFloat32, i, r.comms[u], r.streams[u]));
    require_nccl(ncclRecv(recvs[u], small, ncclFloat32, prev, r.comms[u], r.streams[u]));
    require_nccl(ncclSend(sends[u] + small + large, small, ncclFloat32, i, r.comms[u], r.streams[u]));
    require_nccl(ncclSend(sends[u] + small, large, ncclFloat32, next, r.comms[u], r.streams[u]));
    require_nccl(ncclRecv(recvs[u] + small, large, ncclFloat32, prev, r.comms[u], r.streams[u]));
  }
  require_nccl(ncclGroupEnd());
  synchronize_all(r);
  for (int i = 0; i < 3; ++i) {
    const int prev = (i + 2) % 3;
    std::vector<float> want = block_values(prev, 0, small);
    const std::vector<float> second = block_values(prev, 1, large), self = block_values(i, 2, small);
    want.insert(want.end(), second.begin(), second.end());
    want.insert(want.end(), self.begin(), self.end());
    CHECK(host_floats(recvs[static_cast<size_t>(i)], want.size()) == want);
    cudaFree(sends[static_cast<size_t>(i)]);
    cudaFree(recvs[static_cast<size_t>(i)]);
  }
}

TEST_CASE("NCCL stand-in: ncclAlltoAll, ncclGather and ncclScatter as NCCL 2.28 defines them",
          "[standin][nccl][p2p]") {
  const int n = 4;
  const size_t count = 400000;  // two chunks of a lane's slot
  Ranks r(n);
  std::vector<float*> sends, recvs;
  for (int i = 0; i < n; ++i) {
    std::vector<float> all;
    for (int b = 0; b < n; ++b) {
      const std::vector<float> v = block_values(i, b, count);
      all.insert(all.end(), v.begin(), v.end());
    }
    sends.push_back(device_floats(i, all));
    recvs.push_back(device_floats(i, std::vector<float>(all.size(), -1.0f)));
  }
  auto block = [&](int rank, size_t b) {
    return host_floats(recvs[static_cast<size_t>(rank)] + b * count, count);
  };
  require_nccl(ncclGroupStart());
  for (int i = 0; i < n; ++i)
    require_nccl(ncclAlltoAll(sends[static_cast<size_t>(i)], recvs[static_cast<size_t>(i)], count,
                              ncclFloat32, r.comms[static_cast<size_t>(i)],
                              r.streams[static_cast<size_t>(i)]));
  require_nccl(ncclGroupEnd());
  synchronize_all(r);
  for (int i = 0; i < n; ++i)
    for (int b = 0; b < n; ++b) CHECK(block(i, static_cast<size_t>(b)) == block_values(b, i, count));
  const int root = 1;
  require_nccl(ncclGroupStart());
  for (int i = 0; i < n; ++i)
    require_nccl(ncclGather(sends[static_cast<size_t>(i)], recvs[static_cast<size_t>(i)], count, ncclFloat32,
                            root, r.comms[static_cast<size_t>(i)], r.streams[static_cast<size_t>(i)]));
  require_nccl(ncclGroupEnd());
  synchronize_all(r);
  for (int b = 0; b < n; ++b) CHECK(block(root, static_cast<size_t>(b)) == block_values(b, 0, count));
  require_nccl(ncclGroupStart());
  for (int i = 0; i < n; ++i)
    require_nccl(ncclScatter(sends[static_cast<size_t>(i)], recvs[static_cast<size_t>(i)], count, ncclFloat32,
                             root, r.comms[static_cast<size_t>(i)], r.streams[static_cast<size_t>(i)]));
  require_nccl(ncclGroupEnd());
  synchronize_all(r);
  for (int i = 0; i < n; ++i) CHECK(block(i, 0) == block_values(root, i, count));
  for (int i = 0; i < n; ++i)
    cudaFree(sends[static_cast<size_t>(i)]), cudaFree(recvs[static_cast<size_t>(i)]);
}

TEST_CASE("NCCL stand-in: a lone send and receive outside a group, charged on the virtual clock",
          "[standin][nccl][p2p]") {
  Ranks r(2);
  const size_t n = 1 << 20;
  float* a = device_floats(0, block_values(0, 0, n));
  float* b = device_floats(1, std::vector<float>(n, 0.0f));
  cudaEvent_t start, stop;
  require_cuda(cudaSetDevice(1));
  require_cuda(cudaEventCreate(&start));
  require_cuda(cudaEventCreate(&stop));
  require_cuda(cudaEventRecord(start, r.streams[1]));
  require_nccl(ncclSend(a, n, ncclFloat32, 1, r.comms[0], r.streams[0]));
  require_nccl(ncclRecv(b, n, ncclFloat32, 0, r.comms[1], r.streams[1]));
  require_cuda(cudaEventRecord(stop, r.streams[1]));
  require_cuda(cudaEventSynchronize(stop));
  float ms = 0.0f;
  require_cuda(cudaEventElapsedTime(&ms, start, stop));
  CHECK(ms > 0.004f);  // 4 MiB over NVLink: tens of microseconds of the p2p model, not nothing
  CHECK(ms < 1.0f);
  CHECK(host_floats(b, n) == block_values(0, 0, n));
  // A count of 0 moves nothing and waits for no one, whatever the buffer.
  require_nccl(ncclSend(nullptr, 0, ncclFloat32, 1, r.comms[0], r.streams[0]));
  synchronize_all(r);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
}

TEST_CASE("NCCL stand-in: point-to-point arguments checked as NCCL does, sizes that differ fail both sides",
          "[standin][nccl][p2p]") {
  Ranks r(2);
  std::vector<float> host(64);
  float* a = device_floats(0, host);
  float* b = device_floats(1, host);
  CHECK(ncclSend(a, 16, ncclFloat32, 2, r.comms[0], r.streams[0]) == ncclInvalidArgument);
  CHECK(std::string(ncclGetLastError(r.comms[0])).find("Send : invalid root 2") != std::string::npos);
  CHECK(ncclRecv(a, 16, ncclFloat32, -1, r.comms[0], r.streams[0]) == ncclInvalidArgument);
  CHECK(ncclSend(a, 16, static_cast<ncclDataType_t>(99), 1, r.comms[0], r.streams[0]) == ncclInvalidArgument);
  CHECK(ncclSend(host.data(), 16, ncclFloat32, 1, r.comms[0], r.streams[0]) == ncclInvalidArgument);
  CHECK(ncclRecv(a, 16, ncclFloat32, 1, r.comms[0], r.streams[1]) == ncclInvalidUsage);
  CHECK(ncclGather(a, a, 16, ncclFloat32, 2, r.comms[0], r.streams[0]) == ncclInvalidArgument);
  // An error inside a group comes back from ncclGroupEnd too, and nothing runs.
  require_nccl(ncclGroupStart());
  CHECK(ncclSend(a, 16, ncclFloat32, 5, r.comms[0], r.streams[0]) == ncclInvalidArgument);
  CHECK(ncclGroupEnd() == ncclInvalidArgument);
  require_nccl(ncclGroupStart());
  require_nccl(ncclSend(a, 16, ncclFloat32, 1, r.comms[0], r.streams[0]));
  require_nccl(ncclRecv(b, 32, ncclFloat32, 0, r.comms[1], r.streams[1]));
  require_nccl(ncclGroupEnd());
  for (ncclComm_t c : r.comms) CHECK(await_async_error(c) == ncclInvalidUsage);
  CHECK(
      std::string(ncclGetLastError(r.comms[1])).find("rank 0 sends 64 bytes to rank 1, which receives 128") !=
      std::string::npos);
  for (auto& c : r.comms) require_nccl(ncclCommAbort(c)), c = nullptr;
  cudaFree(a);
  cudaFree(b);
}
