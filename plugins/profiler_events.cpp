#include "plugins/profiler_events.hpp"

#include <atomic>
#include <cstring>

#include "plugins/telemetry_table.hpp"

namespace autotune::plugin::profiler {
namespace {

constexpr size_t kCollSlots = 1024;
constexpr size_t kChannelSlots = 4096;

struct CollSlot {
  std::atomic<uint32_t> live{0};
  uint64_t key = 0;  // telemetry::pack of what the collective is
  uint64_t bytes = 0;
  uint32_t expected = 0;
  std::atomic<uint32_t> stopped{0};
  std::atomic<uint64_t> longest_ns{0};
};

struct ChannelSlot {
  std::atomic<uint32_t> live{0};
  CollSlot* parent = nullptr;
  uint64_t start = 0;
  uint64_t stop = 0;
};

CollSlot g_colls[kCollSlots];
ChannelSlot g_channels[kChannelSlots];
std::atomic<uint64_t> g_next_coll{0}, g_next_channel{0}, g_dropped{0};

// A free slot from a ring, trying a few past the cursor; null when they are all taken.
template <typename Slot, size_t N>
Slot* take(Slot (&pool)[N], std::atomic<uint64_t>& cursor) noexcept {
  const uint64_t first = cursor.fetch_add(1, std::memory_order_relaxed);
  for (uint64_t i = 0; i < 8; ++i) {
    Slot& s = pool[(first + i) % N];
    uint32_t expected = 0;
    if (s.live.load(std::memory_order_relaxed) == 0 &&
        s.live.compare_exchange_strong(expected, 1, std::memory_order_acquire))
      return &s;
  }
  return nullptr;
}

template <typename Slot, size_t N>
Slot* ours(Slot (&pool)[N], void* handle) noexcept {
  auto p = reinterpret_cast<uintptr_t>(handle), begin = reinterpret_cast<uintptr_t>(&pool[0]),
       end = reinterpret_cast<uintptr_t>(&pool[N]);
  if (p < begin || p >= end || (p - begin) % sizeof(Slot) != 0) return nullptr;
  return static_cast<Slot*>(handle);
}

int bytes_log2(uint64_t bytes) noexcept {
  return bytes == 0 ? 0 : 63 - __builtin_clzll(bytes);
}

void start_coll(const CommContext* comm, void** handle, const ncclProfilerCollDescr_v5_t& d) noexcept {
  const int c = collective_id(d.func), a = algorithm_id(d.algo), p = protocol_id(d.proto);
  // AllGather and Broadcast count bytes; the others elements. The tuner's size (the rules' bytes) is the
  // whole buffer for AllGather and ReduceScatter.
  const size_t element = (c == 0 || c == 2) ? 1 : datatype_bytes(d.datatype);
  // A communicator NCCL describes as 0 nodes (or more nodes than ranks) has no shape a rule or learn can use.
  if (c < 0 || a < 0 || p < 0 || element == 0 || d.nChannels == 0 || comm->nodes < 1 ||
      comm->ranks < comm->nodes) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint64_t bytes = static_cast<uint64_t>(d.count) * element;
  if (c == 2 || c == 3) bytes *= static_cast<uint64_t>(comm->ranks);
  CollSlot* s = take(g_colls, g_next_coll);
  if (s == nullptr) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s->key = telemetry::pack({comm->nodes, comm->ranks, c, bytes_log2(bytes), a, p, d.nChannels});
  s->bytes = bytes;
  s->expected = d.nChannels;
  s->stopped.store(0, std::memory_order_relaxed);
  s->longest_ns.store(0, std::memory_order_relaxed);
  *handle = s;
}

void start_channel(void** handle, const ncclProfilerEventDescr_v5_t& d) noexcept {
  CollSlot* parent = ours(g_colls, d.parentObj);
  if (parent == nullptr) return;
  ChannelSlot* s = take(g_channels, g_next_channel);
  if (s == nullptr) {
    // Without this channel the collective can never complete: give its slot back, uncounted.
    if (parent->stopped.fetch_add(1, std::memory_order_acq_rel) + 1 == parent->expected)
      parent->live.store(0, std::memory_order_release);
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s->parent = parent;
  s->start = d.kernelCh.pTimer;
  s->stop = 0;
  *handle = s;
}

}  // namespace

void start_event(const CommContext* comm, void** handle, const ncclProfilerEventDescr_v5_t* descr) noexcept {
  if (handle == nullptr) return;
  *handle = nullptr;
  if (comm == nullptr || descr == nullptr) return;
  if (descr->type == ncclProfileColl)
    start_coll(comm, handle, descr->coll);
  else if (descr->type == ncclProfileKernelCh)
    start_channel(handle, *descr);
}

void record_state(void* handle, ncclProfilerEventState_t state,
                  const ncclProfilerEventStateArgs_v5_t* args) noexcept {
  if (state != NCCL_PROFILER_KERNEL_CH_STOP || args == nullptr) return;
  if (ChannelSlot* s = ours(g_channels, handle)) s->stop = args->kernelCh.pTimer;
}

void stop_event(void* handle) noexcept {
  // A Coll event's own stop means "enqueued": its time comes from its channels.
  ChannelSlot* s = ours(g_channels, handle);
  if (s == nullptr) return;
  CollSlot* parent = s->parent;
  const uint64_t ns = s->stop > s->start ? s->stop - s->start : 0;
  s->live.store(0, std::memory_order_release);
  uint64_t longest = parent->longest_ns.load(std::memory_order_relaxed);
  while (ns > longest && !parent->longest_ns.compare_exchange_weak(longest, ns, std::memory_order_relaxed)) {
  }
  if (parent->stopped.fetch_add(1, std::memory_order_acq_rel) + 1 != parent->expected) return;
  telemetry::Table::process().record_packed(parent->key, parent->bytes,
                                            parent->longest_ns.load(std::memory_order_relaxed));
  parent->live.store(0, std::memory_order_release);
}

uint64_t dropped() noexcept {
  return g_dropped.load(std::memory_order_relaxed);
}

int algorithm_id(const char* s) noexcept {
  static constexpr const char* kNames[] = {"TREE",      "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
                                           "NVLS_TREE", "PAT"};
  for (int i = 0; s != nullptr && i < 7; ++i)
    if (std::strcmp(s, kNames[i]) == 0) return i;
  return -1;
}

int protocol_id(const char* s) noexcept {
  static constexpr const char* kNames[] = {"LL", "LL128", "SIMPLE"};
  for (int i = 0; s != nullptr && i < 3; ++i)
    if (std::strcmp(s, kNames[i]) == 0) return i;
  return -1;
}

int collective_id(const char* s) noexcept {
  static constexpr const char* kNames[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  for (int i = 0; s != nullptr && i < 5; ++i)
    if (std::strcmp(s, kNames[i]) == 0) return i;
  return -1;
}

size_t datatype_bytes(const char* s) noexcept {
  struct Type {
    const char* name;
    size_t bytes;
  };
  static constexpr Type kTypes[] = {{"ncclInt8", 1},     {"ncclUint8", 1},      {"ncclInt32", 4},
                                    {"ncclUint32", 4},   {"ncclInt64", 8},      {"ncclUint64", 8},
                                    {"ncclFloat16", 2},  {"ncclFloat32", 4},    {"ncclFloat64", 8},
                                    {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};
  for (const Type& t : kTypes)
    if (s != nullptr && std::strcmp(s, t.name) == 0) return t.bytes;
  return 0;
}

}  // namespace autotune::plugin::profiler
