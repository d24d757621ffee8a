#pragma once
// The job's [online] state in this process, shared by the tuner half and the profiler half (one library
// named in NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN is one dlopen handle, so one copy of this state). The
// profiler half's init looks at the profile the job names (the tuner's rules for which profile, pin and NCCL
// version apply; nothing is logged from here but telemetry's own WARN) and, when it has [online] telemetry =
// true, asks NCCL for collective events and starts the telemetry writer: a thread of its own that writes
// this rank's aggregates (telemetry::Table) to <store>/telemetry/<digest>-<job>-<rank>.telemetry every
// NCCL_AUTOTUNE_TELEMETRY_INTERVAL seconds (default 300) and when the last communicator is finalized or the
// plugin unloaded; atomically (common/atomic_file.hpp), and with one WARN the first time a write fails.
// No collective ever waits for it. Thread-safe.

#include <cstdint>
#include <filesystem>
#include <string>

#include "nccl/tuner_abi.h"

namespace autotune::plugin::online {

inline constexpr const char* kIntervalEnv = "NCCL_AUTOTUNE_TELEMETRY_INTERVAL";
inline constexpr const char* kStoreEnv = "NCCL_AUTOTUNE_STORE";
inline constexpr const char* kJobEnv = "NCCL_AUTOTUNE_JOB_ID";

// The profiler init's mask: profiler::kActivationMask when telemetry is on for this job, else 0 (leave NCCL's
// mask alone: no event is activated).
int on_profiler_init(ncclDebugLogger_t log) noexcept;
// Writes once more when this was the last communicator.
void on_profiler_finalize() noexcept;

// Where this process writes (empty when telemetry is off).
std::filesystem::path telemetry_file() noexcept;

}  // namespace autotune::plugin::online
