#pragma once
// The process-wide state behind the sweep hook (sweep_hook.h): what the search engine asked to force, and
// what the last getCollInfo call saw. Written by the hook's C functions, read by every getCollInfo call.
// Thread-safe and lock-free: the forced choice is one atomic word; the "last seen" record is a seqlock whose
// writers never wait (a writer that finds another one mid-write skips its record; the counter still counts).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "nccl/sweep_hook.h"

namespace autotune::plugin::sweep {

struct Forced {
  bool active = false;  // something is forced (algorithm/protocol, or channels alone)
  int algorithm = -1;   // -1 when only channels are forced
  int protocol = -1;
  int channels = 0;  // 0 = NCCL decides
};

namespace detail {
extern std::atomic<bool> g_armed;  // armed()'s word (sweep_hook.cpp)
}

// False until nccl_autotune_force is first called: then getCollInfo records what it sees. Until then the
// hook costs one load per call, inlined into getCollInfo (a call into sweep_hook.cpp cost more than the
// load).
inline bool armed() noexcept {
  return detail::g_armed.load(std::memory_order_acquire);
}
Forced forced() noexcept;

void record(int collective, size_t bytes, int algorithm, int protocol, int channels, bool was_forced,
            bool refused) noexcept;

int force(int algorithm, int protocol, int channels) noexcept;
int last(nccl_autotune_seen_t* out) noexcept;

}  // namespace autotune::plugin::sweep
