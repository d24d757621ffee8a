#pragma once
// NCCL's cost model, fitted instead of assumed: NCCL estimates an operation as latency + bytes / bandwidth,
// where the latency grows with the algorithm's step count (a ring's steps with its nodes, a tree's with
// log2 of them) and the bandwidth per node stays what the links give (NCCL-FACTS.md, the cost model). Fitting
// time = a0 + a1 x steps(nodes) + b x bytes to one candidate's measured times over the smaller scales of a
// shape (same ranks per node) predicts its time at a larger one. Each size is fitted from its neighbours
// (a factor 4 either way), since channels and pipelining change what a byte costs from one range to the
// next. Pure functions; safe to call from several threads.

#include <cstdint>
#include <optional>
#include <span>

#include "nccl/vocabulary.hpp"

namespace autotune::search {

// One measured median: a candidate's time at one scale and size.
struct FitPoint {
  int nodes = 1;
  uint64_t bytes = 0;
  double time_us = 0.0;
};

struct PredictedTime {
  double time_us = 0.0;
  double spread = 0.0;  // the fit's relative residual (root mean square): how far to trust time_us
  int scales = 0;       // distinct node counts it was fitted from
};

// The time at `nodes` and `bytes` from the points of one (collective, candidate). `algorithm` chooses the
// latency's growth (ring: with the nodes; the others: with log2 of them); nullopt (NCCL chooses) takes the
// one that fits better. nullopt when fewer than two node counts or four points lie near `bytes`.
std::optional<PredictedTime> predict_time(std::span<const FitPoint> points,
                                          std::optional<nccl::Algorithm> algorithm, int nodes,
                                          uint64_t bytes);

}  // namespace autotune::search
