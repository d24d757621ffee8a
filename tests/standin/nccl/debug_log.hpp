#pragma once
// NCCL's logger, as NCCL_DEBUG (VERSION, WARN, INFO, TRACE) and NCCL_DEBUG_SUBSYS (a comma list of INIT,
// COLL, TUNING, ..., ALL; a leading ^ excludes; default INIT,BOOTSTRAP,ENV) select it, in NCCL's line format
// on stdout or NCCL_DEBUG_FILE (%h host, %p pid): "host:pid:tid [dev] NCCL INFO ...", WARN with file:line.
// Every WARN also becomes the text ncclGetLastError returns. The tuner plugin gets log() as its
// ncclDebugLogger_t. Thread-safe.

#include <cstdarg>
#include <string>

namespace autotune::standin {

// NCCL's levels and subsystem flags (ncclDebugLogLevel, ncclDebugLogSubSys).
enum LogLevel { kLogVersion = 1, kLogWarn = 2, kLogInfo = 3, kLogTrace = 5 };
constexpr unsigned long kInit = 0x1, kColl = 0x2, kTuning = 0x40, kEnv = 0x80, kBootstrap = 0x1000;

void vlog(int level, unsigned long flags, const char* file, int line, const char* fmt, va_list args);
void log(int level, unsigned long flags, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
bool log_enabled(int level, unsigned long flags);

// The device shown in this thread's log lines ("[3]").
void set_log_device(int device);

// The last WARN of this process, for ncclGetLastError.
std::string last_warning();

}  // namespace autotune::standin

#define STANDIN_INFO(flags, ...) \
  ::autotune::standin::log(::autotune::standin::kLogInfo, flags, __FILE__, __LINE__, __VA_ARGS__)
#define STANDIN_WARN(...) \
  ::autotune::standin::log(::autotune::standin::kLogWarn, ~0ul, __FILE__, __LINE__, __VA_ARGS__)
