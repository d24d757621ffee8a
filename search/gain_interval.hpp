#pragma once
// How sure a calibration is of a gain. The gain of a candidate over NCCL's default at one size is
// median(default times) / median(candidate times) - 1 (the same as its busbw over the default's, minus 1);
// over several sizes it is the geometric mean of those ratios, minus 1. Its interval is a percentile
// bootstrap over the repetitions: every resample draws each size's default and candidate samples with
// replacement, independently, and recomputes the gain; the interval holds the middle `confidence` of those
// gains. The noise is thus estimated where it was measured, size by size. The resampling is seeded from the
// samples themselves (sorted), so the same measurements always give the same interval, whatever order they
// were journaled in. Pure functions; safe to call from several threads.

#include <cstdint>
#include <span>
#include <vector>

namespace autotune::search {

// The timing samples of NCCL's default and of one candidate at one measured size (microseconds).
struct SamplePair {
  std::span<const double> baseline;
  std::span<const double> candidate;
};

struct GainInterval {
  double gain = 0.0;  // the point estimate (time ratio - 1)
  double low = 0.0;   // the interval's ends, in the same unit
  double high = 0.0;
  double confidence = 0.0;  // the share of resampled gains inside [low, high]; 0 when nothing was measured
  bool measured() const { return confidence > 0.0; }
  // The gain beats `threshold` beyond the noise: even the interval's lower end does.
  bool beats(double threshold) const { return measured() && low > threshold; }
  // The interval holds `threshold`: more repetitions could change the answer.
  bool straddles(double threshold) const { return measured() && low <= threshold && threshold < high; }
};

// Median by linear interpolation between the middle order statistics (as Samples::median). 0 when empty.
double median_of(std::span<const double> values);

// The gain over every size given and its interval. A size with no samples on either side is left out; with
// none left the result is not measured(). `resamples` >= 100. Telling two candidates apart is the same
// question with the slower one as the baseline.
GainInterval gain_interval(std::span<const SamplePair> sizes, double confidence, int resamples = 1000);

}  // namespace autotune::search
