#include "plugins/sweep_state.hpp"

#include <atomic>

#include "nccl/tuner_abi.h"

namespace autotune::plugin::sweep {

std::atomic<bool> detail::g_armed{false};

namespace {

// One word so that a getCollInfo call never sees an algorithm from one force() and a protocol from another.
// Layout: bit 63 active; bits 0-7 algorithm+1; bits 8-15 protocol+1; bits 16-47 channels.
std::atomic<uint64_t> g_forced{0};

uint64_t pack(const Forced& f) {
  if (!f.active) return 0;
  return (uint64_t{1} << 63) | static_cast<uint64_t>(f.algorithm + 1) |
         (static_cast<uint64_t>(f.protocol + 1) << 8) |
         (static_cast<uint64_t>(static_cast<uint32_t>(f.channels)) << 16);
}

Forced unpack(uint64_t word) {
  Forced f;
  if (!(word >> 63)) return f;
  f.active = true;
  f.algorithm = static_cast<int>(word & 0xff) - 1;
  f.protocol = static_cast<int>((word >> 8) & 0xff) - 1;
  f.channels = static_cast<int>(static_cast<uint32_t>(word >> 16));
  return f;
}

// The "last seen" record. Every field is atomic, so readers and writers never race in the language's sense;
// the sequence number tells a reader whether it saw one record whole.
struct Seen {
  std::atomic<uint32_t> seq{0};
  std::atomic<uint64_t> calls{0};
  std::atomic<int> collective{-1};
  std::atomic<uint64_t> bytes{0};
  std::atomic<int> algorithm{-1};
  std::atomic<int> protocol{-1};
  std::atomic<int> channels{0};
  std::atomic<int> forced{0};
  std::atomic<int> refused{0};
};
Seen g_seen;

bool try_begin_write(uint32_t& seq) {
  seq = g_seen.seq.load(std::memory_order_relaxed);
  return (seq & 1) == 0 && g_seen.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire,
                                                              std::memory_order_relaxed);
}

void end_write(uint32_t seq) {
  g_seen.seq.store(seq + 2, std::memory_order_release);
}

void store_fields(int collective, uint64_t bytes, int algorithm, int protocol, int channels, int forced,
                  int refused) {
  constexpr auto r = std::memory_order_relaxed;
  g_seen.collective.store(collective, r);
  g_seen.bytes.store(bytes, r);
  g_seen.algorithm.store(algorithm, r);
  g_seen.protocol.store(protocol, r);
  g_seen.channels.store(channels, r);
  g_seen.forced.store(forced, r);
  g_seen.refused.store(refused, r);
}

}  // namespace

Forced forced() noexcept {
  return unpack(g_forced.load(std::memory_order_acquire));
}

void record(int collective, size_t bytes, int algorithm, int protocol, int channels, bool was_forced,
            bool refused) noexcept {
  g_seen.calls.fetch_add(1, std::memory_order_relaxed);
  uint32_t seq;
  // Another communicator's thread is writing its record right now: its record is as "last" as ours.
  if (!try_begin_write(seq)) return;
  store_fields(collective, bytes, algorithm, protocol, channels, was_forced ? 1 : 0, refused ? 1 : 0);
  end_write(seq);
}

int force(int algorithm, int protocol, int channels) noexcept {
  const bool stop_algo = algorithm == -1 && protocol == -1;
  const bool valid_algo =
      algorithm >= 0 && algorithm < NCCL_NUM_ALGORITHMS && protocol >= 0 && protocol < NCCL_NUM_PROTOCOLS;
  if ((!stop_algo && !valid_algo) || channels < 0) return -1;
  Forced f;
  f.active = valid_algo || channels > 0;
  f.algorithm = valid_algo ? algorithm : -1;
  f.protocol = valid_algo ? protocol : -1;
  f.channels = channels;
  g_forced.store(pack(f), std::memory_order_release);
  // Not a hot path: wait for a concurrent recorder rather than lose the reset.
  uint32_t seq;
  while (!try_begin_write(seq)) {
  }
  g_seen.calls.store(0, std::memory_order_relaxed);
  store_fields(-1, 0, -1, -1, 0, 0, 0);
  end_write(seq);
  detail::g_armed.store(true, std::memory_order_release);
  return 0;
}

int last(nccl_autotune_seen_t* out) noexcept {
  if (out == nullptr) return -1;
  // Acquire loads of the fields keep the closing sequence check after them (a standalone fence would do the
  // same, but ThreadSanitizer does not model fences).
  constexpr auto a = std::memory_order_acquire;
  for (;;) {
    const uint32_t before = g_seen.seq.load(a);
    if (before & 1) continue;
    out->calls = g_seen.calls.load(a);
    out->collective = g_seen.collective.load(a);
    out->bytes = static_cast<size_t>(g_seen.bytes.load(a));
    out->algorithm = g_seen.algorithm.load(a);
    out->protocol = g_seen.protocol.load(a);
    out->channels = g_seen.channels.load(a);
    out->forced = g_seen.forced.load(a);
    out->refused = g_seen.refused.load(a);
    if (g_seen.seq.load(std::memory_order_relaxed) == before) return 0;
  }
}

}  // namespace autotune::plugin::sweep

extern "C" {

__attribute__((visibility("default"))) int nccl_autotune_force(int algorithm, int protocol, int channels) {
  return autotune::plugin::sweep::force(algorithm, protocol, channels);
}

__attribute__((visibility("default"))) int nccl_autotune_last(nccl_autotune_seen_t* out) {
  return autotune::plugin::sweep::last(out);
}

__attribute__((visibility("default"))) int nccl_autotune_hook_version(void) {
  return NCCL_AUTOTUNE_HOOK_VERSION;
}

}  // extern "C"
