#include "search/cost_fit.hpp"

#include <array>
#include <cmath>
#include <set>
#include <vector>

namespace autotune::search {
namespace {

// How the latency grows with the nodes: a ring's steps with them, a tree's (and the rest's) with log2.
double fit_steps(bool ring, int nodes) {
  return ring ? static_cast<double>(nodes) : std::log2(static_cast<double>(std::max(nodes, 1)));
}

struct LinearFit {
  std::array<double, 3> coef{};  // a0, a1 (per step), b (per byte)
  double spread = 0.0;
  bool ok = false;
};

// Solves the normal equations of the used columns by Gaussian elimination; false when singular.
bool solve_normal(std::array<std::array<double, 4>, 3>& m, int n, std::array<double, 3>& out) {
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(m[r][c]) > std::abs(m[pivot][c])) pivot = r;
    if (std::abs(m[pivot][c]) < 1e-12) return false;
    std::swap(m[c], m[pivot]);
    for (int r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (int k = c; k <= n; ++k) m[r][k] -= f * m[c][k];
    }
  }
  for (int c = 0; c < n; ++c) out[c] = m[c][n] / m[c][c];
  return true;
}

// Least squares in relative error (each point weighted by 1/time) over the columns in `used` (a bit each
// for a0, a1, b); a fit with a negative coefficient is refused: latency and cost per byte cannot shrink.
LinearFit fit_columns(std::span<const FitPoint> pts, bool ring, unsigned used) {
  std::vector<int> cols;
  for (int c = 0; c < 3; ++c)
    if (used & (1u << c)) cols.push_back(c);
  const int n = static_cast<int>(cols.size());
  std::array<std::array<double, 4>, 3> m{};
  auto row = [&](const FitPoint& p) {
    std::array<double, 3> x = {1.0, fit_steps(ring, p.nodes), static_cast<double>(p.bytes)};
    for (auto& v : x) v /= p.time_us;
    return x;
  };
  for (const auto& p : pts) {
    const auto x = row(p);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) m[i][j] += x[cols[i]] * x[cols[j]];
      m[i][n] += x[cols[i]];
    }
  }
  std::array<double, 3> sol{};
  LinearFit fit;
  if (!solve_normal(m, n, sol)) return fit;
  for (int i = 0; i < n; ++i) {
    if (sol[i] < 0) return fit;
    fit.coef[cols[i]] = sol[i];
  }
  double sum = 0.0;
  for (const auto& p : pts) {
    const auto x = row(p);
    const double r = x[0] * fit.coef[0] + x[1] * fit.coef[1] + x[2] * fit.coef[2] - 1.0;
    sum += r * r;
  }
  fit.spread = std::sqrt(sum / static_cast<double>(pts.size()));
  fit.ok = true;
  return fit;
}

// The best fit with non-negative coefficients: every subset of the columns, the smallest residual.
LinearFit best_fit(std::span<const FitPoint> pts, bool ring) {
  LinearFit best;
  for (unsigned used = 1; used < 8; ++used) {
    LinearFit f = fit_columns(pts, ring, used);
    if (f.ok && (!best.ok || f.spread < best.spread - 1e-12)) best = f;
  }
  return best;
}

}  // namespace

std::optional<PredictedTime> predict_time(std::span<const FitPoint> points,
                                          std::optional<nccl::Algorithm> algorithm, int nodes,
                                          uint64_t bytes) {
  std::vector<FitPoint> near;
  std::set<int> node_counts;
  for (const auto& p : points)
    if (p.time_us > 0 && p.bytes * 4 >= bytes && p.bytes <= bytes * 4) {
      near.push_back(p);
      node_counts.insert(p.nodes);
    }
  if (node_counts.size() < 2 || near.size() < 4) return std::nullopt;
  std::vector<bool> shapes;
  if (algorithm)
    shapes.push_back(*algorithm == nccl::Algorithm::ring);
  else
    shapes = {true, false};
  LinearFit best;
  bool best_ring = true;
  for (bool ring : shapes) {
    LinearFit f = best_fit(near, ring);
    if (f.ok && (!best.ok || f.spread < best.spread)) best = f, best_ring = ring;
  }
  if (!best.ok) return std::nullopt;
  const double t =
      best.coef[0] + best.coef[1] * fit_steps(best_ring, nodes) + best.coef[2] * static_cast<double>(bytes);
  if (!(t > 0)) return std::nullopt;
  return PredictedTime{t, best.spread, static_cast<int>(node_counts.size())};
}

}  // namespace autotune::search
