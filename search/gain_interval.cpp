#include "search/gain_interval.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace autotune::search {
namespace {

uint64_t mix(uint64_t x) {
  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A small deterministic stream (splitmix64), enough for resampling indices.
class Stream {
 public:
  explicit Stream(uint64_t seed) : state_(seed) {}
  size_t below(size_t n) {
    state_ += 0x9e3779b97f4a7c15ULL;
    return static_cast<size_t>((static_cast<unsigned __int128>(mix(state_)) * n) >> 64);
  }

 private:
  uint64_t state_;
};

struct SortedPair {
  std::vector<double> baseline, candidate;
};

double median_in_place(std::vector<double>& v) {
  const size_t n = v.size();
  const size_t mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  if (n % 2 == 1) return v[mid];
  const double upper = v[mid];
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
  return (lower + upper) / 2.0;
}

void resample(const std::vector<double>& from, Stream& stream, std::vector<double>& into) {
  into.resize(from.size());
  for (auto& x : into) x = from[stream.below(from.size())];
}

}  // namespace

double median_of(std::span<const double> values) {
  if (values.empty()) return 0.0;
  std::vector<double> v(values.begin(), values.end());
  return median_in_place(v);
}

GainInterval gain_interval(std::span<const SamplePair> sizes, double confidence, int resamples) {
  std::vector<SortedPair> pairs;
  uint64_t seed = 0x243f6a8885a308d3ULL;
  for (const auto& s : sizes) {
    if (s.baseline.empty() || s.candidate.empty()) continue;
    SortedPair p{{s.baseline.begin(), s.baseline.end()}, {s.candidate.begin(), s.candidate.end()}};
    std::sort(p.baseline.begin(), p.baseline.end());
    std::sort(p.candidate.begin(), p.candidate.end());
    for (const auto* side : {&p.baseline, &p.candidate}) {
      seed = mix(seed ^ side->size());
      for (double x : *side) seed = mix(seed ^ std::bit_cast<uint64_t>(x));
    }
    pairs.push_back(std::move(p));
  }
  GainInterval out;
  if (pairs.empty()) return out;
  const double k = static_cast<double>(pairs.size());
  auto gain_of = [&](auto&& median) {
    double log_sum = 0.0;
    for (size_t i = 0; i < pairs.size(); ++i) log_sum += std::log(median(i, true) / median(i, false));
    return std::exp(log_sum / k) - 1.0;
  };
  std::vector<double> scratch;
  out.gain = gain_of([&](size_t i, bool baseline) {
    scratch = baseline ? pairs[i].baseline : pairs[i].candidate;
    return median_in_place(scratch);
  });
  Stream stream(seed);
  const int n = std::max(100, resamples);
  std::vector<double> gains;
  gains.reserve(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    gains.push_back(gain_of([&](size_t i, bool baseline) {
      resample(baseline ? pairs[i].baseline : pairs[i].candidate, stream, scratch);
      return median_in_place(scratch);
    }));
  std::sort(gains.begin(), gains.end());
  const double tail = std::clamp((1.0 - confidence) / 2.0, 0.0, 0.5);
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(gains.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, gains.size() - 1);
    return gains[lo] + (gains[hi] - gains[lo]) * (pos - static_cast<double>(lo));
  };
  out.low = std::min(out.gain, at(tail));
  out.high = std::max(out.gain, at(1.0 - tail));
  out.confidence = confidence;
  return out;
}

}  // namespace autotune::search
