#include "tests/standin/nccl/profiling.hpp"

#include <cstdarg>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "nccl/profiler_loader.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/settings.hpp"

namespace autotune::standin {
namespace {

void plugin_log(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                ...) {
  va_list args;
  va_start(args, fmt);
  vlog(static_cast<int>(level), flags, file, line, fmt, args);
  va_end(args);
}

// NCCL's one process-wide mask (ncclProfilerEventMask), which every communicator's init may set.
std::atomic<int> g_mask{0};
int g_mask_storage = 0;  // what the plugin's init writes through; copied into g_mask under the open lock
std::mutex g_init_mutex;

const nccl::ProfilerPlugin* process_profiler() {
  static std::once_flag once;
  static nccl::ProfilerPlugin* plugin = nullptr;
  std::call_once(once, [] {
    nccl::ProfilerOpenOptions o;
    if (const char* v = std::getenv("NCCL_PROFILER_PLUGIN")) o.plugin = std::string(v);
    o.nccl_version_code = settings().version_code;
    std::vector<std::string> lines;
    plugin = nccl::ProfilerPlugin::open(o, &lines).release();
    for (const auto& l : lines) log(kLogInfo, kInit, __FILE__, __LINE__, "%s", l.c_str());
  });
  return plugin;
}

const char* func_name(int c) {
  static constexpr const char* kNames[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  return c >= 0 && c < 5 ? kNames[c] : "Unknown";
}

// NCCL's ncclDatatypeToString, by ncclDataType_t value.
const char* datatype_name(int t) {
  static constexpr const char* kNames[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",
                                           "ncclInt64",   "ncclUint64",  "ncclFloat16", "ncclFloat32",
                                           "ncclFloat64", "ncclBfloat16"};
  return t >= 0 && t < 10 ? kNames[t] : "Unknown";
}

size_t datatype_bytes(int t) {
  static constexpr size_t kBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return t >= 0 && t < 10 ? kBytes[t] : 1;
}

const char* algo_name(int a) {
  static constexpr const char* kNames[] = {"TREE",      "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
                                           "NVLS_TREE", "PAT"};
  return a >= 0 && a < 7 ? kNames[a] : "Unknown";
}

const char* proto_name(int p) {
  static constexpr const char* kNames[] = {"LL", "LL128", "SIMPLE"};
  return p >= 0 && p < 3 ? kNames[p] : "Unknown";
}

constexpr int kCollMask = ncclProfileColl | ncclProfileKernelCh;

}  // namespace

CommProfiling::CommProfiling(uint64_t comm_hash, int nodes, int ranks, int rank)
    : rank_(rank), ranks_(ranks) {
  const nccl::ProfilerPlugin* p = process_profiler();
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(g_init_mutex);
  g_mask_storage = g_mask.load();
  const ncclResult_t r =
      p->calls().init(&context_, comm_hash, &g_mask_storage, nullptr, nodes, ranks, rank, plugin_log);
  g_mask.store(g_mask_storage);
  if (r != ncclSuccess) {
    log(kLogWarn, kInit, __FILE__, __LINE__,
        "PROFILER/Plugin: init returned %d: profiler off for this communicator", static_cast<int>(r));
    return;
  }
  live_ = true;
  STANDIN_INFO(kInit, "Profiler event mask: 0x%x", g_mask.load());
}

CommProfiling::~CommProfiling() {
  if (live_) process_profiler()->calls().finalize(context_);
}

bool CommProfiling::active() const {
  return live_ && ranks_ > 1 && (g_mask.load(std::memory_order_relaxed) & kCollMask) != 0;
}

void* CommProfiling::coll_event(const ProfiledCall& call) {
  // The sequence number counts every collective of its function, events or not (NCCL's RAS relies on it).
  const uint64_t seq = call.collective >= 0 && call.collective < 5 ? seq_[call.collective].fetch_add(1) : 0;
  if (!active()) return nullptr;
  ncclProfilerEventDescr_v5_t d{};
  d.type = ncclProfileColl;
  d.rank = rank_;
  d.coll.seqNumber = seq;
  d.coll.func = func_name(call.collective);
  d.coll.sendBuff = call.send;
  d.coll.recvBuff = call.recv;
  const bool bytes = call.collective == 0 || call.collective == 2;  // Broadcast, AllGather count bytes
  d.coll.count = bytes ? call.count * datatype_bytes(call.datatype) : call.count;
  d.coll.datatype = bytes ? "ncclInt8" : datatype_name(call.datatype);
  d.coll.root = call.root;
  d.coll.nChannels = static_cast<uint8_t>(call.channels);
  d.coll.nWarps = 16;
  d.coll.algo = algo_name(call.algorithm);
  d.coll.proto = proto_name(call.protocol);
  const ncclProfiler_v5_t& p = process_profiler()->calls();
  void* handle = nullptr;
  p.startEvent(context_, &handle, &d);
  p.stopEvent(handle);
  return handle;
}

void CommProfiling::channel_events(void* coll, int channels, double start_us, double end_us) {
  if (!live_ || (g_mask.load(std::memory_order_relaxed) & ncclProfileKernelCh) == 0) return;
  const ncclProfiler_v5_t& p = process_profiler()->calls();
  const uint64_t start = static_cast<uint64_t>(start_us * 1000.0),
                 stop = static_cast<uint64_t>(end_us * 1000.0);
  for (int ch = 0; ch < channels; ++ch) {
    ncclProfilerEventDescr_v5_t d{};
    d.type = ncclProfileKernelCh;
    d.parentObj = coll;
    d.rank = rank_;
    d.kernelCh.channelId = static_cast<uint8_t>(ch);
    d.kernelCh.pTimer = start;
    void* handle = nullptr;
    p.startEvent(context_, &handle, &d);
    ncclProfilerEventStateArgs_v5_t args{};
    args.kernelCh.pTimer = stop;
    p.recordEventState(handle, NCCL_PROFILER_KERNEL_CH_STOP, &args);
    p.stopEvent(handle);
  }
}

std::string CommProfiling::plugin_text() const {
  const nccl::ProfilerPlugin* p = process_profiler();
  if (p == nullptr) return "none";
  char mask[16];
  std::snprintf(mask, sizeof mask, "0x%x", g_mask.load());
  return p->name() + " (v" + std::to_string(p->version()) + ") from " + p->library() + ", events " + mask;
}

}  // namespace autotune::standin
