// CUDA runtime entry points for streams, events, stream capture and graphs, and the extension the NCCL
// stand-in uses (stream_work.hpp). See README.md for the list.
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <set>

#include "tests/standin/common/devices.hpp"
#include "tests/standin/cudart/copy_work.hpp"
#include "tests/standin/cudart/errors.hpp"
#include "tests/standin/cudart/event_state.hpp"
#include "tests/standin/cudart/memory.hpp"
#include "tests/standin/cudart/streams.hpp"

using namespace autotune::standin;

// The handles CUDA's headers leave opaque.
struct CUevent_st {
  std::shared_ptr<EventState> state;
};
struct CUgraph_st {
  std::vector<GraphNode> nodes;
};
struct CUgraphExec_st {
  std::vector<GraphNode> nodes;
};

namespace {

// Which handles are alive, so that a stale or made-up one gets cudaErrorInvalidResourceHandle.
template <typename T>
class Handles {
 public:
  T* add(T* h) {
    std::lock_guard lock(mutex_);
    live_.insert(h);
    return h;
  }
  bool contains(T* h) {
    std::lock_guard lock(mutex_);
    return live_.count(h) > 0;
  }
  bool remove(T* h) {
    std::lock_guard lock(mutex_);
    return live_.erase(h) > 0;
  }

 private:
  std::mutex mutex_;
  std::set<T*> live_;
};

Handles<CUevent_st>& events() {
  static auto* h = new Handles<CUevent_st>();
  return *h;
}
Handles<CUgraph_st>& graphs() {
  static auto* h = new Handles<CUgraph_st>();
  return *h;
}
Handles<CUgraphExec_st>& graph_execs() {
  static auto* h = new Handles<CUgraphExec_st>();
  return *h;
}

cudaError_t new_stream(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr || (flags & ~cudaStreamNonBlocking) != 0) return cudaErrorInvalidValue;
  if (devices().empty()) return cudaErrorNoDevice;
  *stream = handle_of(create_stream(current_device(), (flags & cudaStreamNonBlocking) == 0));
  return cudaSuccess;
}

// Runs `fn(stream)` for a valid handle.
template <typename Fn>
cudaError_t with_stream(cudaStream_t handle, Fn&& fn) {
  cudaError_t e = cudaSuccess;
  StreamPtr s = resolve_stream(handle, &e);
  if (!s) return returned(e);
  return returned(fn(s));
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return returned(new_stream(stream, cudaStreamDefault));
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  return returned(new_stream(stream, flags));
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int) {
  return returned(new_stream(stream, flags));
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return returned(cudaErrorInvalidResourceHandle);
  return returned(destroy_stream(stream));
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return with_stream(stream, [](const StreamPtr& s) { return synchronize(s); });
}
cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return with_stream(stream, [](const StreamPtr& s) { return query(s); });
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  if (flags != 0 && flags != cudaEventWaitExternal) return returned(cudaErrorInvalidValue);
  if (!events().contains(event)) return returned(cudaErrorInvalidResourceHandle);
  return with_stream(stream, [&](const StreamPtr& s) {
    bool in_capture = false;
    MarkerPtr m = event_marker(*event->state, &in_capture);
    if (!m || in_capture) return cudaSuccess;  // nothing recorded yet, or an order inside the same capture
    return submit(s, std::make_shared<WaitWork>(), {m});
  });
}
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  if (fn == nullptr) return returned(cudaErrorInvalidValue);
  return with_stream(stream, [&](const StreamPtr& s) {
    return submit(s, std::make_shared<HostFunctionWork>(fn, user_data));
  });
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return with_stream(stream, [&](const StreamPtr& s) { return begin_capture(s, mode); });
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (graph == nullptr) return returned(cudaErrorInvalidValue);
  return with_stream(stream, [&](const StreamPtr& s) {
    std::vector<GraphNode> nodes;
    *graph = nullptr;
    cudaError_t e = end_capture(s, &nodes);
    if (e == cudaSuccess) *graph = graphs().add(new CUgraph_st{std::move(nodes)});
    return e;
  });
}
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return returned(cudaErrorInvalidValue);
  return with_stream(stream, [&](const StreamPtr& s) {
    *status = capture_status(s);
    return cudaSuccess;
  });
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (event == nullptr) return returned(cudaErrorInvalidValue);
  if (flags & ~(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess))
    return returned(cudaErrorInvalidValue);
  if (flags & cudaEventInterprocess) return returned(cudaErrorNotSupported);
  if (devices().empty()) return returned(cudaErrorNoDevice);
  auto state = std::make_shared<EventState>();
  state->device = current_device();
  state->flags = flags;
  *event = events().add(new CUevent_st{state});
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!events().remove(event)) return returned(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!events().contains(event)) return returned(cudaErrorInvalidResourceHandle);
  return with_stream(stream, [&](const StreamPtr& s) {
    if (device_of_stream(*s) != event->state->device) return cudaErrorInvalidResourceHandle;
    return record_event(s, event->state);
  });
}
cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!events().contains(event)) return returned(cudaErrorInvalidResourceHandle);
  bool in_capture = false;
  MarkerPtr m = event_marker(*event->state, &in_capture);
  if (in_capture) return returned(cudaErrorCapturedEvent);
  return marker_done(m) ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!events().contains(event)) return returned(cudaErrorInvalidResourceHandle);
  bool in_capture = false;
  MarkerPtr m = event_marker(*event->state, &in_capture);
  if (in_capture) return returned(cudaErrorCapturedEvent);
  wait_marker(m);
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return returned(cudaErrorInvalidValue);
  if (!events().contains(start) || !events().contains(end)) return returned(cudaErrorInvalidResourceHandle);
  if ((start->state->flags | end->state->flags) & cudaEventDisableTiming)
    return returned(cudaErrorInvalidResourceHandle);
  bool a_captured = false, b_captured = false;
  MarkerPtr a = event_marker(*start->state, &a_captured), b = event_marker(*end->state, &b_captured);
  if (a_captured || b_captured) return returned(cudaErrorCapturedEvent);
  if (!a || !b) return returned(cudaErrorInvalidResourceHandle);  // never recorded
  if (!marker_done(a) || !marker_done(b)) return cudaErrorNotReady;
  *ms = static_cast<float>((b->end_us - a->end_us) / 1000.0);
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (exec == nullptr) return returned(cudaErrorInvalidValue);
  if (!graphs().contains(graph)) return returned(cudaErrorInvalidValue);
  *exec = graph_execs().add(new CUgraphExec_st{graph->nodes});
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!graph_execs().contains(exec)) return returned(cudaErrorInvalidResourceHandle);
  return with_stream(stream, [&](const StreamPtr& s) {
    if (capture_status(s) != cudaStreamCaptureStatusNone)
      return cudaErrorStreamCaptureUnsupported;  // graphs inside captures are not modelled
    for (const GraphNode& n : exec->nodes) {
      cudaError_t e = n.record ? record_event(s, n.record) : submit(s, n.work);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  });
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (!graphs().remove(graph)) return returned(cudaErrorInvalidValue);
  delete graph;
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (!graph_execs().remove(exec)) return returned(cudaErrorInvalidValue);
  delete exec;
  return cudaSuccess;
}

}  // extern "C"

namespace autotune::standin::cuda_ext {

cudaError_t enqueue(cudaStream_t stream, std::shared_ptr<StreamWork> work) {
  if (devices().empty()) return cudaErrorNoDevice;
  cudaError_t e = cudaSuccess;
  StreamPtr s = resolve_stream(stream, &e);
  if (!s) return e;
  return submit(s, std::move(work));
}

int device_of(const void* p, size_t bytes) {
  auto a = find_allocation(p, bytes);
  return a && a->device >= 0 ? a->device : -1;
}

int stream_device(cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  StreamPtr s = resolve_stream(stream, &e);
  return s ? device_of_stream(*s) : -1;
}

}  // namespace autotune::standin::cuda_ext
