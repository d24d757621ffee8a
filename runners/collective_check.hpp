#pragma once
// How the NCCL runner proves a candidate's output right: every rank's input is a pattern of small integers
// stored as float, so every sum over ranks is exact in any order (no tolerance needed: a forced protocol that
// corrupts data, or a buffer NCCL never wrote, shows as a mismatch). The expected receive buffer per
// collective is computed on the host from the same patterns, with nccl-tests' sizes (for AllGather and
// ReduceScatter `bytes` is the whole buffer) and root 0 for Broadcast and Reduce. The point-to-point
// operations are checked as nccl-tests checks them: alltoall's block j on rank r is block r of rank j's
// input; sendrecv's rank r holds rank r-1's input (each rank sends to r+1); gather's root holds every rank's
// input in rank order; scatter's rank r holds block r of the root's input (root 0 for both). Pure functions,
// free of CUDA, so they are tested without a GPU.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nccl/operation.hpp"
#include "nccl/vocabulary.hpp"

namespace autotune::runners {

// Broadcast's, Reduce's, Gather's and Scatter's root, in timing and checking alike (nccl-tests' default).
inline constexpr int kCheckRoot = 0;

// Elements per rank in each buffer, and the count NCCL's call takes, for one operation of nccl-tests' size.
struct BufferCounts {
  uint64_t send = 0;
  uint64_t recv = 0;
  // AllGather: per-rank send count; ReduceScatter: per-rank receive count; alltoall, gather, scatter: the
  // count per peer; sendrecv: the count sent
  uint64_t op_count = 0;
};
BufferCounts buffer_counts(nccl::Operation op, int ranks, uint64_t bytes);
inline BufferCounts buffer_counts(nccl::Collective c, int ranks, uint64_t bytes) {
  return buffer_counts(nccl::to_operation(c), ranks, bytes);
}

// Element `index` of rank `rank`'s input: an integer in [1, 21], so a sum over up to 798,000 ranks stays
// below 2^24 and is exact in float. Depends on the rank, so a block from the wrong rank is caught.
float input_value(int rank, uint64_t index);

// Rank `rank`'s send buffer (buffer_counts().send elements).
std::vector<float> make_input(nccl::Operation op, int ranks, int rank, uint64_t bytes);
inline std::vector<float> make_input(nccl::Collective c, int ranks, int rank, uint64_t bytes) {
  return make_input(nccl::to_operation(c), ranks, rank, bytes);
}

// What rank `rank`'s receive buffer must hold afterwards (buffer_counts().recv elements); nullopt where NCCL
// defines nothing (Reduce and Gather on ranks other than the root). Throws std::invalid_argument for ranks <
// 1 or a rank out of range.
std::optional<std::vector<float>> expected_output(nccl::Operation op, int ranks, int rank, uint64_t bytes);
inline std::optional<std::vector<float>> expected_output(nccl::Collective c, int ranks, int rank,
                                                         uint64_t bytes) {
  return expected_output(nccl::to_operation(c), ranks, rank, bytes);
}

// An exact, element-wise comparison (a NaN never matches).
struct CheckResult {
  uint64_t compared = 0;
  uint64_t wrong = 0;
  uint64_t first_index = 0;  // of the first mismatch
  float expected = 0.0f;     // at first_index
  float found = 0.0f;
  bool ok() const { return wrong == 0; }
  // "3 of 1024 elements wrong; first at [17]: expected 12, found 0"
  std::string describe() const;
};
// Throws std::invalid_argument when the sizes differ.
CheckResult compare_exact(std::span<const float> expected, std::span<const float> found);

}  // namespace autotune::runners
