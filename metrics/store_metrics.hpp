#pragma once
// What `nccl-autotune metrics` reports of a profile store, as Prometheus metric families (docs/operations.md
// lists each): per cluster's profile, its version and age; per communicator shape, collective and size
// bucket (a power of two, so label values stay bounded), the bus bandwidth production reached (the jobs'
// telemetry, believed as `learn` believes it: calibrate/telemetry_trust.hpp) beside what the profile
// expected there (the rule's calibrated busbw, else NCCL's default in the calibration journal), and the share
// of calls the rule, its runner-up (exploration) or NCCL decided; the telemetry awaiting `learn`; the last
// `verify` of each cluster and health check of each node (profiles/upkeep_record.hpp). Reads only.
// Thread-compatible.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "metrics/exposition.hpp"

namespace autotune::metrics {

struct MetricsOptions {
  int64_t now = 0;  // unix seconds: ages are taken from here
  // Telemetry `learn` already folded (telemetry/learned/) still counts for the busbw and decision figures
  // while it was written less than this long ago, so that a learn does not blank the dashboards.
  int64_t window_s = 24 * 3600;
};

struct StoreMetrics {
  std::vector<Family> families;
  std::vector<std::string> warnings;  // files left out and why (a profile, a journal, a record unreadable)
};

// A store without profiles gives the upkeep records alone (and no error).
StoreMetrics collect_store_metrics(const std::filesystem::path& store, const MetricsOptions& options);

}  // namespace autotune::metrics
