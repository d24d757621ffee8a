#pragma once
// Streams as CUDA defines them, on host threads: each stream is an in-order queue run by a worker thread of
// its own (started with its first operation), so work completes asynchronously to the thread that issued it
// and one operation can stay incomplete (a hung collective) while the host thread goes on. Every operation
// completes a Marker carrying the virtual GPU time it ended at: a stream's clock advances by what its work
// says it took, never by host time, and an operation starts no earlier than everything it depends on ended.
// The legacy default stream (0, cudaStreamLegacy) waits for the device's blocking streams and they wait for
// it; cudaStreamNonBlocking streams do neither; cudaStreamPerThread is a blocking stream per thread and
// device. A stream being captured records its operations into a graph instead of running them.
// Thread-safe: one process-wide mutex guards every queue, marker and capture.

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "tests/standin/cudart/stream_work.hpp"

namespace autotune::standin {

// The completion of one operation.
struct Marker {
  bool done = false;
  double end_us = 0.0;  // virtual time at completion
};
using MarkerPtr = std::shared_ptr<Marker>;

struct EventState;

// One node of a captured graph: work to run, or an event to record where the stream stands.
struct GraphNode {
  std::shared_ptr<StreamWork> work;
  std::shared_ptr<EventState> record;
};

struct StreamState;
using StreamPtr = std::shared_ptr<StreamState>;

// The stream a handle names on the calling thread; nullptr (and *error set) for an invalid handle.
StreamPtr resolve_stream(cudaStream_t handle, cudaError_t* error);
StreamPtr create_stream(int device, bool blocking);
// The handle a program holds for a created stream.
cudaStream_t handle_of(const StreamPtr& s);
// Forgets the handle; queued work still runs, then the worker ends.
cudaError_t destroy_stream(cudaStream_t handle);
int device_of_stream(const StreamState& s);

// Appends work (after `extra_deps` too), or records it when the stream is capturing. *done (when not null)
// gets the operation's marker; it stays empty when the work was captured.
cudaError_t submit(const StreamPtr& s, std::shared_ptr<StreamWork> work,
                   std::vector<MarkerPtr> extra_deps = {}, MarkerPtr* done = nullptr);
// Records an event at the stream's current position (or into its capture).
cudaError_t record_event(const StreamPtr& s, const std::shared_ptr<EventState>& event);

// Host-side waits. Synchronising a capturing stream is an error that invalidates the capture.
cudaError_t synchronize(const StreamPtr& s);
cudaError_t query(const StreamPtr& s);
cudaError_t synchronize_device(int device);
void wait_marker(const MarkerPtr& m);
bool marker_done(const MarkerPtr& m);

// An event's last record, read under the streams' mutex; *in_capture says it went into a capture.
MarkerPtr event_marker(const EventState& e, bool* in_capture);

// Capture (cudaStreamBeginCapture / EndCapture / IsCapturing).
cudaError_t begin_capture(const StreamPtr& s, cudaStreamCaptureMode mode);
cudaError_t end_capture(const StreamPtr& s, std::vector<GraphNode>* nodes);
cudaStreamCaptureStatus capture_status(const StreamPtr& s);
// A call CUDA forbids while this thread (or any thread, in global mode) captures: invalidates those captures
// and returns the error the call must return, or cudaSuccess when nothing is being captured.
cudaError_t check_unsafe_call();

}  // namespace autotune::standin
