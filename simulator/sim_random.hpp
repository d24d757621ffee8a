#pragma once
// Counter-based randomness for the simulator: every number is a pure function of a seed and the coordinates
// it belongs to (collective, size, candidate, repetition, rank), not of a stream position. So the same seed
// gives the same numbers whatever the batch order, and every MPI process computes the same value for a given
// simulated rank without communicating.

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace autotune::sim::random {

inline uint64_t mix(uint64_t x) {
  // splitmix64's finalizer: a bijection with good avalanche.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t hash(std::initializer_list<uint64_t> parts) {
  uint64_t h = 0x6a09e667f3bcc909ULL;
  for (uint64_t p : parts) h = mix(h ^ mix(p));
  return h;
}

// Uniform in [0, 1).
inline double uniform(uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// Standard normal (Box-Muller over two derived uniforms).
inline double gaussian(uint64_t h) {
  double u1 = uniform(mix(h ^ 0x1ULL));
  double u2 = uniform(mix(h ^ 0x2ULL));
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace autotune::sim::random
