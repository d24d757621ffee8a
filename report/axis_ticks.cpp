#include "report/axis_ticks.hpp"

#include <fmt/format.h>

#include <cmath>

namespace autotune::report {
namespace {

// The value m x 10^e, rounded to the precision the decimal has, so that 3 x 0.1 prints as 0.3.
double decimal(double m, int e) {
  const double v = m * std::pow(10.0, e);
  return std::stod(fmt::format("{:.12g}", v));
}

// The 1-2-5 step for about `target` intervals over `span`.
double step_for(double span, int target) {
  const double raw = span / std::max(target, 1);
  const int e = static_cast<int>(std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (decimal(m, e) >= raw * (1 - 1e-9)) return decimal(m, e);
  return decimal(1.0, e + 1);
}

}  // namespace

AxisTicks linear_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    hi = lo + pad;
    lo = lo >= 0 ? std::max(0.0, lo - pad) : lo - pad;
  }
  const double step = step_for(hi - lo, target);
  AxisTicks a;
  const long first = static_cast<long>(std::floor(lo / step + 1e-9));
  const long last = static_cast<long>(std::ceil(hi / step - 1e-9));
  a.lo = std::stod(fmt::format("{:.12g}", static_cast<double>(first) * step));
  a.hi = std::stod(fmt::format("{:.12g}", static_cast<double>(last) * step));
  for (long k = first; k <= last; ++k) a.ticks.push_back(std::stod(fmt::format("{:.12g}", k * step)));
  return a;
}

AxisTicks log_ticks(double lo, double hi) {
  if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1.0;
  if (!(hi >= lo)) hi = lo;
  const int e_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int e_hi = static_cast<int>(std::floor(std::log10(hi) + 1e-9));
  const bool every_125 = e_hi - e_lo < 3;
  std::vector<double> candidates;
  for (int e = e_lo - 1; e <= e_hi + 1; ++e)
    for (double m : every_125 ? std::vector<double>{1, 2, 5} : std::vector<double>{1})
      candidates.push_back(decimal(m, e));
  AxisTicks a;
  a.lo = candidates.front();
  a.hi = candidates.back();
  for (double c : candidates) {
    if (c <= lo * (1 + 1e-9)) a.lo = c;  // the largest value at or below lo
  }
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it)
    if (*it >= hi * (1 - 1e-9)) a.hi = *it;  // the smallest at or above hi
  if (a.hi <= a.lo) {
    for (double c : candidates)
      if (c > a.lo) {
        a.hi = c;
        break;
      }
  }
  for (double c : candidates)
    if (c >= a.lo * (1 - 1e-9) && c <= a.hi * (1 + 1e-9)) a.ticks.push_back(c);
  return a;
}

std::vector<double> log2_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi >= lo)) return out;
  const int e0 = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
  const int e1 = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
  int every = 10;
  for (int k : {1, 2, 5, 10})
    if ((e1 - e0) / k <= 10) {
      every = k;
      break;
    }
  for (int e = e0; e <= e1; ++e)
    if (((e % every) + every) % every == 0) out.push_back(std::ldexp(1.0, e));
  return out;
}

std::string tick_label(double value) {
  return fmt::format("{:g}", value);
}

}  // namespace autotune::report
