#pragma once
// How the NCCL stand-in drives a profiler plugin, as NCCL does: the plugin opened once per process through
// nccl/profiler_loader (NCCL_PROFILER_PLUGIN's rules, the symbol order of the NCCL version reported), one
// process-wide activation mask the plugin's init sets, init per communicator before the tuner's (commHash,
// nodes, ranks, rank), and, for each collective of two or more ranks while the mask asks for Coll or KernelCh
// events: a Coll event (seqNumber per function from 0, NCCL's names for the function, datatype, algorithm and
// protocol, the channels used; count in bytes for AllGather and Broadcast) started and stopped when the work
// is enqueued (on the stream's thread at each replay, for captured work), then, when the work completes, one
// KernelCh event per channel with the virtual clock's start and stop in ns (start, KernelChStop state, stop),
// as NCCL's proxy thread reports them. Free of nccl.h (its types clash with the plugin ABI headers).
// Thread-safe: a CommProfiling may be used from the launching thread and the stream's thread at once.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace autotune::standin {

struct ProfiledCall {
  int collective = 4;  // ncclFunc_t
  size_t count = 0;    // NCCL's count argument
  int datatype = 7;    // ncclDataType_t
  int root = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  int algorithm = 1, protocol = 2, channels = 1;
};

class CommProfiling {
 public:
  // The plugin's init; a plugin whose init fails is not called again for this communicator (NCCL unloads
  // it). Never throws.
  CommProfiling(uint64_t comm_hash, int nodes, int ranks, int rank);
  ~CommProfiling();  // the plugin's finalize
  CommProfiling(const CommProfiling&) = delete;
  CommProfiling& operator=(const CommProfiling&) = delete;

  // The Coll event (start, then stop: NCCL's stop means enqueued); its handle, which the channel events name
  // as their parent, or null when the mask asks for none.
  void* coll_event(const ProfiledCall& call);
  // The KernelCh events of a completed collective (none unless the mask asks for them).
  void channel_events(void* coll, int channels, double start_us, double end_us);
  // Whether the mask, as now, asks for collective events: NCCL snapshots it at each API call.
  bool active() const;

  // "autotune (v5) from /path/lib.so, events 0x42", or "none".
  std::string plugin_text() const;

 private:
  void* context_ = nullptr;
  bool live_ = false;
  int rank_ = 0, ranks_ = 1;
  std::atomic<uint64_t> seq_[5] = {};
};

}  // namespace autotune::standin
