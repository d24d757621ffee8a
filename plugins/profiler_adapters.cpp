// The exported profiler structs NCCL 2.28 (ncclProfiler_v5) and 2.29-2.30 (ncclProfiler_v6, first) look up,
// over one core (profiler_events.hpp, online_job.hpp). init asks for events only when the job's profile has
// [online] telemetry = true; otherwise it returns a null context and leaves the activation mask alone, so
// NCCL activates nothing and the plugin behaves exactly as a tuner alone. Every entry point checks its
// pointers, catches everything and returns ncclSuccess: an error from init would make NCCL unload the
// profiler, and the events' results are ignored or worse.

#include <new>

#include "nccl/profiler_abi.h"
#include "plugins/online_job.hpp"
#include "plugins/profiler_events.hpp"
#include "plugins/tuner_core.hpp"

namespace autotune::plugin::profiler {
namespace {

ncclResult_t on_init(void** context, uint64_t commId, int* eActivationMask, const char* /*commName*/,
                     int nNodes, int nranks, int rank, ncclDebugLogger_t log) noexcept {
  if (context == nullptr) return ncclSuccess;
  *context = nullptr;
  const int mask = online::on_profiler_init(log);
  if (mask == 0 || eActivationMask == nullptr) return ncclSuccess;
  CommContext* comm = new (std::nothrow) CommContext{commId, nNodes, nranks, rank};
  if (comm == nullptr) {
    online::on_profiler_finalize();
    return ncclSuccess;
  }
  *eActivationMask |= mask;  // one process-wide int: other bits are not ours to clear
  *context = comm;
  return ncclSuccess;
}

ncclResult_t on_start(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr) noexcept {
  profiler::start_event(static_cast<const CommContext*>(context), eHandle, eDescr);
  return ncclSuccess;
}

ncclResult_t on_stop(void* eHandle) noexcept {
  profiler::stop_event(eHandle);
  return ncclSuccess;
}

ncclResult_t on_state(void* eHandle, ncclProfilerEventState_t eState,
                      ncclProfilerEventStateArgs_v5_t* eStateArgs) noexcept {
  profiler::record_state(eHandle, eState, eStateArgs);
  return ncclSuccess;
}

ncclResult_t on_finalize(void* context) noexcept {
  if (context == nullptr) return ncclSuccess;
  delete static_cast<CommContext*>(context);
  online::on_profiler_finalize();
  return ncclSuccess;
}

}  // namespace
}  // namespace autotune::plugin::profiler

extern "C" {
using namespace autotune::plugin;

__attribute__((visibility("default")))
ncclProfiler_v6_t ncclProfiler_v6 = {kPluginName,       profiler::on_init,  profiler::on_start,
                                     profiler::on_stop, profiler::on_state, profiler::on_finalize};
__attribute__((visibility("default")))
ncclProfiler_v5_t ncclProfiler_v5 = {kPluginName,       profiler::on_init,  profiler::on_start,
                                     profiler::on_stop, profiler::on_state, profiler::on_finalize};
}
