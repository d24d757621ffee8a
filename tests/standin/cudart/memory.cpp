#include "tests/standin/cudart/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "tests/standin/common/devices.hpp"

namespace autotune::standin {

namespace {

constexpr size_t kAlignment = 256;  // cudaMalloc's guarantee

struct Registry {
  std::mutex mutex;
  std::map<const char*, Allocation> live;  // by base address
  std::vector<size_t> used;                // per device
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: stream workers may outlive static destructors
  return *r;
}

cudaError_t allocate(int device, size_t bytes, void** out) {
  if (out == nullptr) return cudaErrorInvalidValue;
  if (bytes == 0) {
    *out = nullptr;
    return cudaSuccess;
  }
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (device >= 0) {
    r.used.resize(devices().size(), 0);
    if (r.used[static_cast<size_t>(device)] + bytes > devices()[static_cast<size_t>(device)].memory_bytes)
      return cudaErrorMemoryAllocation;
  }
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  char* base = static_cast<char*>(p);
  r.live[base] = Allocation{base, bytes, device};
  if (device >= 0) r.used[static_cast<size_t>(device)] += bytes;
  *out = p;
  return cudaSuccess;
}

cudaError_t release(void* p, bool device_memory) {
  if (p == nullptr) return cudaSuccess;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.live.find(static_cast<const char*>(p));
  if (it == r.live.end() || (it->second.device >= 0) != device_memory) return cudaErrorInvalidValue;
  if (it->second.device >= 0) r.used[static_cast<size_t>(it->second.device)] -= it->second.size;
  std::free(it->second.base);
  r.live.erase(it);
  return cudaSuccess;
}

}  // namespace

cudaError_t allocate_device(int device, size_t bytes, void** out) {
  return allocate(device, bytes, out);
}
cudaError_t allocate_pinned(size_t bytes, void** out) {
  return allocate(-1, bytes, out);
}
cudaError_t free_device(void* p) {
  return release(p, true);
}
cudaError_t free_pinned(void* p) {
  return release(p, false);
}

std::optional<Allocation> find_allocation(const void* p, size_t bytes) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const char* c = static_cast<const char*>(p);
  auto it = r.live.upper_bound(c);
  if (it == r.live.begin()) return std::nullopt;
  --it;
  const Allocation& a = it->second;
  if (c < a.base || c + bytes > a.base + a.size) return std::nullopt;
  return a;
}

void fill(void* dst, int value, size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* begin = static_cast<char*>(dst);
  char* first = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page);
  char* last = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(begin + bytes)) / page * page);
  // Only our own allocations (anonymous private memory), and only pages wholly inside the range.
  if (value != 0 || last <= first + page || !find_allocation(dst, bytes) ||
      madvise(first, static_cast<size_t>(last - first), MADV_DONTNEED) != 0) {
    std::memset(dst, value, bytes);
    return;
  }
  std::memset(begin, 0, static_cast<size_t>(first - begin));
  std::memset(last, 0, static_cast<size_t>(begin + bytes - last));
}

size_t allocated_on(int device) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return device >= 0 && static_cast<size_t>(device) < r.used.size() ? r.used[static_cast<size_t>(device)] : 0;
}

}  // namespace autotune::standin
