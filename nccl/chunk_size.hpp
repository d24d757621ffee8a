#pragma once
// What NCCL does with the chunk size a v6/v7 tuner's getChunkSize returns (read from NCCL 2.30.7's
// calcCollChunking, src/enqueue.cc): it clamps the value to the largest chunk its buffers hold, then rounds
// it down to a multiple of the protocol's grain. The largest chunk is one step of the protocol's buffer
// (buffer size / NCCL_STEPS, 8 steps), times the collective's chunk steps for Ring with Simple (4 for
// AllReduce, AllGather and ReduceScatter, 1 for Broadcast and Reduce), halved for LL and scaled by 15/16 for
// LL128 (one flag word in each 16). The buffers are NCCL_BUFFSIZE (Simple, default 4 MiB),
// NCCL_LL_BUFFSIZE (default 512 KiB) and NCCL_LL128_BUFFSIZE (default 4,800 KiB). So a chunk above that
// limit needs a larger buffer, and one that is not a multiple of the grain is silently made smaller.
// Pure functions; thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "nccl/vocabulary.hpp"

namespace autotune::nccl {

struct BufferSizes {
  uint64_t ll = 8 * 512 * 8 * 16;       // NCCL_LL_LINES_PER_THREAD x NCCL_LL_MAX_NTHREADS x steps x 16
  uint64_t ll128 = 120 * 640 * 8 * 8;   // NCCL_LL128_ELEMS_PER_THREAD x NCCL_LL128_MAX_NTHREADS x steps x 8
  uint64_t simple = uint64_t(1) << 22;  // DEFAULT_BUFFSIZE
  bool operator==(const BufferSizes&) const = default;
};

// NCCL's defaults overridden by NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE and NCCL_LL128_BUFFSIZE where `lookup` has
// them as plain positive integers (NCCL ignores the rest and keeps its default).
BufferSizes buffer_sizes(const std::function<std::optional<std::string>(const std::string&)>& lookup);
// The same from a profile's [env] table.
BufferSizes buffer_sizes(const std::map<std::string, std::string>& env);

// The protocol's grain in bytes: LL 16, LL128 1920, Simple 512.
uint64_t chunk_grain(Protocol p);
// The largest chunk NCCL keeps for this collective, algorithm and protocol with these buffers (already a
// multiple of the grain).
uint64_t max_chunk_bytes(Collective c, Algorithm a, Protocol p, const BufferSizes& buffers);

// Why NCCL would not run `chunk` as given for this choice ("above the 2 MiB NCCL_BUFFSIZE allows ...", "not a
// multiple of ..."); nullopt when it would.
std::optional<std::string> chunk_problem(uint64_t chunk, Collective c, Algorithm a, Protocol p,
                                         const BufferSizes& buffers);

}  // namespace autotune::nccl
