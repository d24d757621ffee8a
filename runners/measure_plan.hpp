#pragma once
// The measurement protocol's arithmetic, kept free of CUDA so it is tested here: how many operations one
// timed repetition runs (scaled with size so every repetition lasts long enough to time with CUDA events and
// no size takes forever), and how per-rank timings combine (the slowest rank decides a collective; the mean
// is reported beside it). Pure functions.

#include <cstdint>
#include <span>
#include <vector>

namespace autotune::runners {

struct IterationPolicy {
  double target_us = 2000.0;  // aim for about this much time per timed repetition
  int min_iterations = 1;
  int max_iterations = 1000;  // small sizes: enough to average launch jitter, not forever
};

// Operations per timed repetition for an operation estimated (or measured in warm-up) to take
// `estimate_us`. An estimate <= 0 means unknown: the maximum.
int iterations_for(double estimate_us, const IterationPolicy& policy = {});

// A rough a-priori time for one operation, used before anything is measured: a latency floor plus the bytes
// at a conservative bandwidth. Only sizes the first warm-up; never reported.
double rough_estimate_us(uint64_t bytes);

// Per repetition, the time of one operation on every rank -> per repetition, the max and the mean.
struct CombinedTimes {
  std::vector<double> max_us;
  std::vector<double> mean_us;
};
// per_rank[r][k]: rank r's time for repetition k. All ranks must have the same number of repetitions
// (throws std::invalid_argument otherwise).
CombinedTimes combine_ranks(std::span<const std::vector<double>> per_rank);

// A repetition's loop time (events around `iterations` operations) -> the time of one operation.
inline double per_operation_us(double loop_ms, int iterations) {
  return iterations > 0 ? loop_ms * 1000.0 / iterations : 0.0;
}

}  // namespace autotune::runners
