#pragma once
// Where a chart's axis starts and ends and where its ticks go, so that people read round numbers: on a linear
// axis multiples of one step of 1, 2 or 5 x 10^k, the ends widened to a tick; on a logarithmic axis the
// values 1, 2 and 5 x 10^k (only 1 x 10^k when the range spans more than three decades), the ends widened to
// the nearest such value. Pure functions.

#include <string>
#include <vector>

namespace autotune::report {

struct AxisTicks {
  double lo = 0.0;
  double hi = 1.0;
  std::vector<double> ticks;  // ascending, from lo to hi inclusive
};

// About `target` ticks over [lo, hi]; lo == hi widens to one step either side (never below 0 when lo >= 0).
AxisTicks linear_ticks(double lo, double hi, int target = 5);

// lo and hi must be > 0; a range within one value widens to the 1-2-5 values around it.
AxisTicks log_ticks(double lo, double hi);

// Powers of two in [lo, hi] for a base-2 axis (message sizes): every 1, 2, 5 or 10 doublings, at most 11,
// on exponents that are multiples of that step: 1K 4K 16K .., 1K 32K 1M .., 1K 1M 1G.
std::vector<double> log2_ticks(double lo, double hi);

// A tick's label: the shortest decimal ("0.05", "2", "1000", "1e+06").
std::string tick_label(double value);

}  // namespace autotune::report
