#pragma once
// The rule and the production telemetry that learn's tests judge it by: a 1 MiB AllReduce rule on 2 nodes x 8
// GPUs forcing Ring/LL, whose calibration measured NCCL's default at 100 GB/s busbw, and a telemetry row for
// that shape at a chosen median time. Shared so that the tests of learn and of its transaction speak of the
// same rule.

#include <cstdint>

#include "nccl/vocabulary.hpp"
#include "profiles/profile.hpp"
#include "profiles/telemetry_file.hpp"

namespace autotune::test {

// NCCL's default at 100 GB/s busbw for 1 MiB AllReduce on 16 ranks: bytes * 2 * 15 / 16 / (100 * 1e3) us.
constexpr double kLearnDefaultUs = 1048576.0 * 2 * 15 / 16 / 1e5;

inline profiles::Rule learn_rule() {
  profiles::Rule r;
  r.collective = nccl::Collective::allreduce;
  r.min_bytes = 512 << 10;
  r.max_bytes = 2 << 20;
  r.algorithm = nccl::Algorithm::ring;
  r.protocol = nccl::Protocol::ll;
  r.nodes = profiles::CountRange{2, 2};
  r.ranks = profiles::CountRange{16, 16};
  r.busbw_gbps = 110.0;
  r.default_busbw_gbps = 100.0;
  return r;
}

// `count` calls of 1 MiB on learn_rule()'s shape with algorithm a and protocol p, median p50_us, a few
// percent of spread around it.
inline profiles::TelemetryRow learn_row(nccl::Algorithm a, nccl::Protocol p, double p50_us,
                                        uint64_t count = 500) {
  profiles::TelemetryRow r;
  r.nodes = 2, r.ranks = 16, r.ranks_per_node = 8, r.bytes_log2 = 20, r.count = count;
  r.algorithm = a, r.protocol = p, r.channels = 8;
  r.mean_bytes = 1 << 20;
  r.mean_us = p50_us, r.p25_us = p50_us * 0.97, r.p50_us = p50_us, r.p75_us = p50_us * 1.03;
  r.p90_us = p50_us * 1.05, r.p99_us = p50_us * 1.1, r.min_us = p50_us * 0.9, r.max_us = p50_us * 1.2;
  return r;
}

}  // namespace autotune::test
