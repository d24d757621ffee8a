// The CUDA runtime entry points NVIDIA's static NCCL (Debian's build, compiled against CUDA 12) calls and
// the stand-in runtime (tests/standin/cudart, CUDA 13's API) lacks or declares differently: kernel
// registration and launch (no-ops: the stand-in runs no device code), the driver entry-point query (answered
// from the stand-in libcuda.so.1), CUDA 12's cudaDeviceProp layout, peers, IPC within one process, memory
// pools, and graph capture (never captured here: the graph calls say "not supported"). Declared here with
// CUDA 12's C signatures and no CUDA header, since CUDA 13's headers declare some of these names otherwise.
// Linked as object code: these strong definitions replace the archive's weak stubs (enhcompat.o).
#include <dlfcn.h>
#include <unistd.h>

#include <strings.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tests/standin/common/devices.hpp"
#include "tests/standin/cudart/device_properties.hpp"

namespace {

using cudaError = int;
constexpr cudaError kSuccess = 0, kInvalidValue = 1, kInvalidDevice = 101, kNotSupported = 801;

struct Dim3 {
  unsigned x, y, z;
};

const autotune::standin::DeviceInfo* device_or_null(int d) {
  const auto& all = autotune::standin::devices();
  return d >= 0 && static_cast<size_t>(d) < all.size() ? &all[static_cast<size_t>(d)] : nullptr;
}

// CUDA 12's struct cudaDeviceProp (1032 bytes): CUDA 13 dropped clockRate, deviceOverlap,
// kernelExecTimeoutEnabled, computeMode, maxTexture1DLinear, memoryClockRate,
// singleToDoublePrecisionPerfRatio and cooperativeMultiDeviceLaunch, so its offsets differ.
struct DeviceProp12 {
  char name[256];
  struct {
    char bytes[16];
  } uuid;
  char luid[8];
  unsigned luidDeviceNodeMask;
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize;
  size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment, texturePitchAlignment;
  int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
  int maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear, maxTexture2D[2], maxTexture2DMipmap[2];
  int maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3], maxTextureCubemap;
  int maxTexture1DLayered[2], maxTexture2DLayered[3], maxTextureCubemapLayered[2], maxSurface1D;
  int maxSurface2D[2], maxSurface3D[3], maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver, asyncEngineCount;
  int unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor, streamPrioritiesSupported, globalL1CacheSupported, localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID, hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio, pageableMemoryAccess, concurrentManagedAccess;
  int computePreemptionSupported, canUseHostPointerForRegisteredMem, cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost, maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int rest[76];  // hostRegisterSupported .. unifiedFunctionPointers and CUDA 12's reserved words (unwritten)
};
static_assert(sizeof(DeviceProp12) == 1032, "CUDA 12's cudaDeviceProp is 1032 bytes");

// CUDA 12's struct cudaFuncAttributes.
struct FuncAttributes12 {
  size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
  int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA, maxDynamicSharedSizeBytes;
  int preferredShmemCarveout, clusterDimMustBeSet, requiredClusterWidth, requiredClusterHeight;
  int requiredClusterDepth, clusterSchedulingPolicyPreference, nonPortableClusterSizeAllowed, reserved[16];
};

// What an IPC handle carries here: the process and the address (opened only by the same process).
struct IpcHandle {
  void* ptr;
  pid_t pid;
  char pad[64 - sizeof(void*) - sizeof(pid_t)];
};
static_assert(sizeof(IpcHandle) == 64, "cudaIpcMemHandle_t is 64 bytes");

// The driver, initialised as CUDA's runtime does before it hands out driver entry points.
void* open_driver() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  using Init = int (*)(unsigned);
  auto init = handle ? reinterpret_cast<Init>(dlsym(handle, "cuInit")) : nullptr;
  if (init) init(0);
  return handle;
}
void* driver() {
  static void* handle = open_driver();
  return handle;
}

int fat_binary_handle;  // what __cudaRegisterFatBinary hands back: registration is a no-op
int memory_pool;        // the one memory pool: allocations come from cudaMalloc

}  // namespace

extern "C" {

// The stand-in runtime's own functions these delegate to (C linkage; CUDA 13's header is not included).
cudaError cudaMalloc(void** p, size_t bytes);
cudaError cudaFree(void* p);
cudaError cudaGetDevice(int* device);

void** __cudaRegisterFatBinary(void*) {
  return reinterpret_cast<void**>(&fat_binary_handle);
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
char __cudaInitModule(void**) {
  return 1;
}
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*) {}
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}
cudaError __cudaPopCallConfiguration(Dim3* grid, Dim3* block, size_t* shmem, void** stream) {
  if (grid) *grid = {1, 1, 1};
  if (block) *block = {1, 1, 1};
  if (shmem) *shmem = 0;
  if (stream) *stream = nullptr;
  return kSuccess;
}
// Kernels are NCCL's device code, which nothing here can run: a launch is accepted and does nothing.
cudaError cudaLaunchKernel(const void*, Dim3, Dim3, void**, size_t, void*) {
  return kSuccess;
}
cudaError cudaGetFuncBySymbol(void** function, const void* symbol) {
  if (function == nullptr) return kInvalidValue;
  *function = const_cast<void*>(symbol);
  return kSuccess;
}
cudaError cudaFuncGetAttributes(FuncAttributes12* attr, const void*) {
  if (attr == nullptr) return kInvalidValue;
  *attr = FuncAttributes12{};
  attr->maxThreadsPerBlock = 1024;
  attr->ptxVersion = attr->binaryVersion = 90;
  return kSuccess;
}
cudaError cudaFuncSetAttribute(const void*, int, int) {
  return kSuccess;
}

// NCCL finds the driver API through the runtime: the stand-in libcuda.so.1's exported names.
cudaError cudaGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long, int* status) {
  if (symbol == nullptr || fn == nullptr) return kInvalidValue;
  *fn = driver() ? dlsym(driver(), symbol) : nullptr;
  if (status) *status = *fn ? 0 : 1;  // cudaDriverEntryPointSuccess, ...SymbolNotFound
  return kSuccess;
}

cudaError cudaGetDeviceProperties_v2(DeviceProp12* prop, int device) {
  const auto* d = device_or_null(device);
  if (prop == nullptr) return kInvalidValue;
  if (d == nullptr) return kInvalidDevice;
  autotune::standin::fill_device_properties(prop, *d);
  prop->sharedMemPerBlockOptin = autotune::standin::shared_memory_optin(d->sm);  // CUDA 12's field
  return kSuccess;
}

cudaError cudaDeviceGetByPCIBusId(int* device, const char* bus_id) {
  if (device == nullptr || bus_id == nullptr) return kInvalidValue;
  for (const auto& d : autotune::standin::devices())
    if (strcasecmp(d.pci_bus_id.c_str(), bus_id) == 0) {
      *device = d.ordinal;
      return kSuccess;
    }
  return kInvalidDevice;
}

// Every stand-in GPU reaches every other (NVLink through NVSwitches in the bundled examples).
cudaError cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  if (can == nullptr) return kInvalidValue;
  if (!device_or_null(device) || !device_or_null(peer)) return kInvalidDevice;
  *can = device != peer;
  return kSuccess;
}
cudaError cudaDeviceEnablePeerAccess(int peer, unsigned) {
  return device_or_null(peer) ? kSuccess : kInvalidDevice;
}
cudaError cudaDeviceSetLimit(int, size_t) {
  return kSuccess;
}

// Host memory is device memory here: registering it changes nothing, and its device pointer is itself.
cudaError cudaHostRegister(void*, size_t, unsigned) {
  return kSuccess;
}
cudaError cudaHostUnregister(void*) {
  return kSuccess;
}
cudaError cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned) {
  if (device_ptr == nullptr || host_ptr == nullptr) return kInvalidValue;
  *device_ptr = host_ptr;
  return kSuccess;
}

// IPC: only the process that made a handle can open it (the realnccl jobs share memory within one process;
// simulated nodes talk through NCCL's sockets).
cudaError cudaIpcGetMemHandle(IpcHandle* handle, void* ptr) {
  if (handle == nullptr || ptr == nullptr) return kInvalidValue;
  *handle = IpcHandle{ptr, getpid(), {}};
  return kSuccess;
}
cudaError cudaIpcOpenMemHandle(void** ptr, IpcHandle handle, unsigned) {
  if (ptr == nullptr || handle.pid != getpid()) return kInvalidValue;
  *ptr = handle.ptr;
  return kSuccess;
}
cudaError cudaIpcCloseMemHandle(void*) {
  return kSuccess;
}

// Memory pools: one pool, whose allocations are cudaMalloc's on the current device.
cudaError cudaMemPoolCreate(void** pool, const void*) {
  if (pool == nullptr) return kInvalidValue;
  *pool = &memory_pool;
  return kSuccess;
}
cudaError cudaMemPoolDestroy(void*) {
  return kSuccess;
}
cudaError cudaMemPoolSetAttribute(void*, int, void*) {
  return kSuccess;
}
cudaError cudaMallocFromPoolAsync(void** p, size_t bytes, void*, void*) {
  return cudaMalloc(p, bytes);
}
cudaError cudaFreeAsync(void* p, void*) {
  return cudaFree(p);
}

// Streams are never captured here: capture queries say "none" and graph edits are not supported.
cudaError cudaThreadExchangeStreamCaptureMode(int*) {
  return kSuccess;
}
cudaError cudaStreamGetId(void* stream, unsigned long long* id) {
  if (id == nullptr) return kInvalidValue;
  *id = reinterpret_cast<uintptr_t>(stream);
  return kSuccess;
}
cudaError cudaStreamGetCaptureInfo_v2(void*, int* status, unsigned long long* id, void** graph,
                                      const void** deps, size_t* count) {
  if (status == nullptr) return kInvalidValue;
  *status = 0;  // cudaStreamCaptureStatusNone
  if (id) *id = 0;
  if (graph) *graph = nullptr;
  if (deps) *deps = nullptr;
  if (count) *count = 0;
  return kSuccess;
}
cudaError cudaStreamGetCaptureInfo_v3(void* stream, int* status, unsigned long long* id, void** graph,
                                      const void** deps, const void** edges, size_t* count) {
  if (edges) *edges = nullptr;
  return cudaStreamGetCaptureInfo_v2(stream, status, id, graph, deps, count);
}
cudaError cudaStreamUpdateCaptureDependencies(void*, void*, size_t, unsigned) {
  return kNotSupported;
}
cudaError cudaStreamUpdateCaptureDependencies_v2(void*, void*, const void*, size_t, unsigned) {
  return kNotSupported;
}
cudaError cudaGraphAddDependencies(void*, const void*, const void*, size_t) {
  return kNotSupported;
}
cudaError cudaGraphAddDependencies_v2(void*, const void*, const void*, const void*, size_t) {
  return kNotSupported;
}
cudaError cudaGraphAddEventRecordNode(void**, void*, const void*, size_t, void*) {
  return kNotSupported;
}
cudaError cudaGraphAddEventWaitNode(void**, void*, const void*, size_t, void*) {
  return kNotSupported;
}
cudaError cudaGraphAddHostNode(void**, void*, const void*, size_t, const void*) {
  return kNotSupported;
}
cudaError cudaGraphAddKernelNode(void**, void*, const void*, size_t, const void*) {
  return kNotSupported;
}
cudaError cudaUserObjectCreate(void**, void*, void (*)(void*), unsigned, unsigned) {
  return kNotSupported;
}
cudaError cudaGraphRetainUserObject(void*, void*, unsigned, unsigned) {
  return kNotSupported;
}

}  // extern "C"
