#include "tests/standin/cudart/streams.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

#include "tests/standin/common/devices.hpp"
#include "tests/standin/cudart/event_state.hpp"

namespace autotune::standin {

namespace {

struct Op {
  std::shared_ptr<StreamWork> work;
  std::vector<MarkerPtr> deps;
  MarkerPtr done;
};

struct Capture {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  std::vector<GraphNode> nodes;
  bool invalid = false;
};

// Records where the stream stands; takes no time.
class RecordWork : public StreamWork {
 public:
  double run(double start_us) noexcept override { return start_us; }
};

}  // namespace

struct StreamState {
  int device = 0;
  bool blocking = true;
  bool legacy = false;
  // Guarded by Scheduler::mutex.
  std::deque<Op> queue;
  MarkerPtr tail;
  bool worker = false;
  bool destroyed = false;
  double clock_us = 0.0;  // only the worker moves it
  std::optional<Capture> capture;
};

namespace {

struct Scheduler {
  std::mutex mutex;
  std::condition_variable cv;
  std::map<const StreamState*, StreamPtr> created;
  std::map<int, StreamPtr> legacy;
  std::map<std::pair<std::thread::id, int>, StreamPtr> per_thread;
};

Scheduler& scheduler() {
  static Scheduler* s = new Scheduler();  // never destroyed: workers may run past static destructors
  return *s;
}

template <typename Fn>
void for_each_stream(Scheduler& sc, Fn&& fn) {
  for (auto& [k, s] : sc.created) fn(s);
  for (auto& [k, s] : sc.legacy) fn(s);
  for (auto& [k, s] : sc.per_thread) fn(s);
}

bool ready(const StreamState& s) {
  if (s.queue.empty()) return s.destroyed;
  const auto& deps = s.queue.front().deps;
  return std::all_of(deps.begin(), deps.end(), [](const MarkerPtr& m) { return m->done; });
}

void worker_loop(StreamPtr s) {
  Scheduler& sc = scheduler();
  std::unique_lock lock(sc.mutex);
  for (;;) {
    sc.cv.wait(lock, [&] { return ready(*s); });
    if (s->queue.empty()) {
      s->worker = false;
      return;
    }
    Op op = std::move(s->queue.front());
    s->queue.pop_front();
    double start = s->clock_us;
    for (const auto& d : op.deps) start = std::max(start, d->end_us);
    lock.unlock();
    const double end = op.work->run(start);
    lock.lock();
    s->clock_us = std::max(start, end);
    op.done->end_us = s->clock_us;
    op.done->done = true;
    sc.cv.notify_all();
  }
}

StreamPtr make_stream(int device, bool blocking, bool legacy) {
  auto s = std::make_shared<StreamState>();
  s->device = device;
  s->blocking = blocking;
  s->legacy = legacy;
  return s;
}

// The implicit synchronisation of the legacy default stream with the device's blocking streams.
cudaError_t implicit_deps(Scheduler& sc, const StreamState& s, std::vector<MarkerPtr>& deps) {
  auto pending = [](const StreamPtr& o) { return o->tail && !o->tail->done; };
  if (s.legacy) {
    cudaError_t result = cudaSuccess;
    for_each_stream(sc, [&](const StreamPtr& o) {
      if (o.get() == &s || o->device != s.device || !o->blocking) return;
      if (o->capture) {
        o->capture->invalid = true;
        result = cudaErrorStreamCaptureImplicit;
      }
      if (pending(o)) deps.push_back(o->tail);
    });
    return result;
  }
  if (s.blocking) {
    auto it = sc.legacy.find(s.device);
    if (it != sc.legacy.end() && pending(it->second)) deps.push_back(it->second->tail);
  }
  return cudaSuccess;
}

cudaError_t submit_locked(Scheduler& sc, const StreamPtr& s, GraphNode node, std::vector<MarkerPtr> deps,
                          MarkerPtr* done) {
  if (s->capture) {
    if (s->capture->invalid) return cudaErrorStreamCaptureInvalidated;
    if (!deps.empty()) {  // a wait on work outside the capture
      s->capture->invalid = true;
      return cudaErrorStreamCaptureIsolation;
    }
    if (node.record) node.record->in_capture = true;
    s->capture->nodes.push_back(std::move(node));
    return cudaSuccess;
  }
  if (cudaError_t e = implicit_deps(sc, *s, deps); e != cudaSuccess) return e;
  Op op{node.work ? node.work : std::make_shared<RecordWork>(), std::move(deps), std::make_shared<Marker>()};
  if (node.record) {
    node.record->marker = op.done;
    node.record->in_capture = false;
  }
  if (done) *done = op.done;
  s->tail = op.done;
  s->queue.push_back(std::move(op));
  if (!s->worker) {
    s->worker = true;
    std::thread([s] { worker_loop(s); }).detach();
  }
  sc.cv.notify_all();
  return cudaSuccess;
}

}  // namespace

StreamPtr resolve_stream(cudaStream_t handle, cudaError_t* error) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  const int device = current_device();
  if (handle == nullptr || handle == cudaStreamLegacy) {
    StreamPtr& s = sc.legacy[device];
    if (!s) s = make_stream(device, true, true);
    return s;
  }
  if (handle == cudaStreamPerThread) {
    StreamPtr& s = sc.per_thread[{std::this_thread::get_id(), device}];
    if (!s) s = make_stream(device, true, false);
    return s;
  }
  auto it = sc.created.find(reinterpret_cast<const StreamState*>(handle));
  if (it == sc.created.end()) {
    if (error) *error = cudaErrorInvalidResourceHandle;
    return nullptr;
  }
  return it->second;
}

StreamPtr create_stream(int device, bool blocking) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  StreamPtr s = make_stream(device, blocking, false);
  sc.created[s.get()] = s;
  return s;
}

cudaStream_t handle_of(const StreamPtr& s) {
  return reinterpret_cast<cudaStream_t>(s.get());
}

cudaError_t destroy_stream(cudaStream_t handle) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  auto it = sc.created.find(reinterpret_cast<const StreamState*>(handle));
  if (it == sc.created.end()) return cudaErrorInvalidResourceHandle;
  it->second->destroyed = true;
  sc.created.erase(it);
  sc.cv.notify_all();
  return cudaSuccess;
}

int device_of_stream(const StreamState& s) {
  return s.device;
}

cudaError_t submit(const StreamPtr& s, std::shared_ptr<StreamWork> work, std::vector<MarkerPtr> extra_deps,
                   MarkerPtr* done) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  return submit_locked(sc, s, GraphNode{std::move(work), nullptr}, std::move(extra_deps), done);
}

cudaError_t record_event(const StreamPtr& s, const std::shared_ptr<EventState>& event) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  return submit_locked(sc, s, GraphNode{nullptr, event}, {}, nullptr);
}

void wait_marker(const MarkerPtr& m) {
  if (!m) return;
  Scheduler& sc = scheduler();
  std::unique_lock lock(sc.mutex);
  sc.cv.wait(lock, [&] { return m->done; });
}

bool marker_done(const MarkerPtr& m) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  return !m || m->done;
}

cudaError_t synchronize(const StreamPtr& s) {
  MarkerPtr tail;
  {
    Scheduler& sc = scheduler();
    std::lock_guard lock(sc.mutex);
    if (s->capture) {
      s->capture->invalid = true;
      return cudaErrorStreamCaptureUnsupported;
    }
    tail = s->tail;
  }
  wait_marker(tail);
  return cudaSuccess;
}

cudaError_t query(const StreamPtr& s) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  if (s->capture) {
    s->capture->invalid = true;
    return cudaErrorStreamCaptureUnsupported;
  }
  return !s->tail || s->tail->done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t synchronize_device(int device) {
  if (cudaError_t e = check_unsafe_call(); e != cudaSuccess) return e;
  std::vector<MarkerPtr> tails;
  {
    Scheduler& sc = scheduler();
    std::lock_guard lock(sc.mutex);
    for_each_stream(sc, [&](const StreamPtr& s) {
      if (s->device == device && s->tail) tails.push_back(s->tail);
    });
  }
  for (const auto& t : tails) wait_marker(t);
  return cudaSuccess;
}

MarkerPtr event_marker(const EventState& e, bool* in_capture) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  if (in_capture) *in_capture = e.in_capture;
  return e.marker;
}

cudaError_t begin_capture(const StreamPtr& s, cudaStreamCaptureMode mode) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  if (s->legacy) return cudaErrorStreamCaptureUnsupported;
  if (s->capture) return cudaErrorIllegalState;
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed)
    return cudaErrorInvalidValue;
  s->capture = Capture{mode, std::this_thread::get_id(), {}, false};
  return cudaSuccess;
}

cudaError_t end_capture(const StreamPtr& s, std::vector<GraphNode>* nodes) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  if (!s->capture) return cudaErrorIllegalState;
  if (s->capture->mode != cudaStreamCaptureModeRelaxed && s->capture->thread != std::this_thread::get_id())
    return cudaErrorStreamCaptureWrongThread;
  Capture c = std::move(*s->capture);
  s->capture.reset();
  if (c.invalid) return cudaErrorStreamCaptureInvalidated;
  *nodes = std::move(c.nodes);
  return cudaSuccess;
}

cudaStreamCaptureStatus capture_status(const StreamPtr& s) {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  if (!s->capture) return cudaStreamCaptureStatusNone;
  return s->capture->invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
}

cudaError_t check_unsafe_call() {
  Scheduler& sc = scheduler();
  std::lock_guard lock(sc.mutex);
  bool hit = false;
  for_each_stream(sc, [&](const StreamPtr& s) {
    if (!s->capture || s->capture->mode == cudaStreamCaptureModeRelaxed) return;
    if (s->capture->mode == cudaStreamCaptureModeGlobal || s->capture->thread == std::this_thread::get_id()) {
      s->capture->invalid = true;
      hit = true;
    }
  });
  return hit ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

}  // namespace autotune::standin
