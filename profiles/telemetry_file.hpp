#pragma once
// The telemetry file: what one rank of one job measured in production (the plugin's profiler half writes it
// under <store>/telemetry/, `nccl-autotune learn` reads it). Line-oriented text: a header naming the profile
// version (its digest), the job and the rank, one `row` per (communicator shape, collective, size bucket,
// choice NCCL ran) with count, mean and quantiles of the GPU time, and an `end <rows>` line last, so a file
// cut short is told from a whole one. Bounded: at most kMaxTelemetryBytes, rows beyond are left out and said.
// Pure functions; thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/input_file.hpp"
#include "nccl/vocabulary.hpp"

namespace autotune::profiles {

inline constexpr int kTelemetryFormat = 1;
inline constexpr size_t kMaxTelemetryBytes = 256 * 1024;
// Any job's user can write the telemetry folder: a link there is never followed.
inline constexpr InputKind kTelemetryInput{"a telemetry file", kMaxTelemetryBytes, false,
                                           /*follow_links=*/false};

struct TelemetryRow {
  int nodes = 0, ranks = 0, ranks_per_node = 0;  // ranks_per_node 0: uneven or unknown
  nccl::Collective collective = nccl::Collective::allreduce;
  int bytes_log2 = 0;  // the size bucket: [2^b, 2^(b+1)) bytes as the tuner sees them
  nccl::Algorithm algorithm = nccl::Algorithm::ring;
  nccl::Protocol protocol = nccl::Protocol::simple;
  int channels = 0;
  uint64_t count = 0;
  double mean_bytes = 0;  // the sizes seen, on average (within the bucket)
  // GPU time: mean, quantiles (from a histogram of 4 bins per power of two: within 19 %), min, max.
  double mean_us = 0, p25_us = 0, p50_us = 0, p75_us = 0, p90_us = 0, p99_us = 0, min_us = 0, max_us = 0;
  int line = 0;  // where it was read, for messages
};

struct Telemetry {
  std::string digest;  // the profile version the job ran (16 hex digits)
  std::string cluster;
  std::string nccl_version;
  std::string job, rank, host;
  int64_t written = 0;   // unix seconds
  uint64_t dropped = 0;  // collectives the plugin could not record (its fixed memory was full)
  bool truncated = false;
  std::vector<TelemetryRow> rows;
};

// What no row can be, judged by the same code when the plugin writes a row and when learn reads one: a shape
// outside 1 <= nodes <= ranks (ranks_per_node ranks/nodes when even, else 0), a choice NCCL cannot run
// for the collective (nccl::is_allowed), channels outside 1..64, a
// mean size outside its bucket [2^b, 2^(b+1)), quantiles out of order (min <= p25 <= p50 <= p75 <= p90 <=
// p99 <= max, the mean within min..max), a time of 0 or beyond 1e9 us. nullopt when the row is whole;
// else "expected ..., found ...".
std::optional<std::string> row_problem(const TelemetryRow& r);

// Words are written with whitespace replaced by '_'. Rows beyond kMaxTelemetryBytes are left out and the
// header says `truncated`; rows row_problem() refuses are left out and counted in `dropped`.
std::string format_telemetry(const Telemetry& t);
// Throws InputError(file, line, "expected ..., found ...") for anything but a whole file of this format:
// a foreign file (first lines), a bad row (row_problem() included), a file cut short (no `end`, or its
// count differs).
Telemetry parse_telemetry(std::string_view text, std::string_view file);
// A word as the file holds it: whitespace replaced by '_', "-" for an empty one (a cluster name compares
// with the file's through here).
std::string telemetry_word(std::string_view s);
// "<digest>-<job>-<rank>.telemetry", the parts made file-name safe.
std::string telemetry_file_name(std::string_view digest, std::string_view job, std::string_view rank);

}  // namespace autotune::profiles
