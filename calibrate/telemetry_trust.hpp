#pragma once
// What `learn` believes of the jobs' telemetry (docs/online.md, "Trust"). Every job's user can write
// <store>/telemetry/, so a file there is a claim by whoever owns it, not a measurement: it counts only when
// it is a regular file (no link followed, no FIFO or device waited on), at most kMaxTelemetryBytes, written
// by its owner alone (no group or other write bit), whole, made under a profile version the store published
// for this cluster (its digest) and the profile's NCCL major.minor, and every row is plausible. Anything else
// is refused with a reason and not counted; learn goes on with the rest (a planted file cannot stop it).
// Reads files (through descriptors, never a path twice); thread-compatible.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiles/profile.hpp"
#include "profiles/telemetry_file.hpp"

namespace autotune::calibrate {

struct TelemetryFile {
  std::filesystem::path file;
  profiles::Telemetry telemetry;
  std::string user;  // the file's owner: whose job wrote it ("uid 1234" when the name is unknown)
};

struct RefusedTelemetry {
  std::filesystem::path file;
  std::string why;  // "expected ...; found ..." (with the line when a row is at fault)
};

struct TelemetryTrust {
  std::string cluster;       // the profile's cluster name: other clusters' files are skipped, not refused
  std::string nccl_version;  // the profile's: telemetry of another major.minor is refused
  // Whether `digest` names a version of this cluster's profile the store published (the current file or
  // one under versions/). An all-zero or unknown digest is refused.
  std::function<bool(std::string_view digest)> known_digest;
  const profiles::Profile* profile = nullptr;  // for the plausibility ceilings (implausible())
};

struct TelemetryRead {
  std::vector<TelemetryFile> files;  // trusted, sorted by name
  std::vector<RefusedTelemetry> refused;
};

// No fabric carries more bus bandwidth than this (NVLink 5 is 900 GB/s a direction per GPU); and production
// is not this many times faster than the fastest the calibration measured for the same shape.
inline constexpr double kMaxPlausibleBusbwGbps = 2000.0;
inline constexpr double kMaxOverCalibrated = 2.0;

// Why a row cannot be a measurement of this cluster: its fastest call (min) beyond kMaxPlausibleBusbwGbps,
// or its median beyond kMaxOverCalibrated times the best bus bandwidth the profile's rules record (rule,
// NCCL's default, runner-up) for that collective and shape. nullopt when plausible. (profiles::row_problem
// has already refused the impossible: quantiles out of order, sizes outside their bucket, zero shapes.)
std::optional<std::string> implausible(const profiles::TelemetryRow& row, const profiles::Profile& profile);

// The trust `learn` and `metrics` give telemetry of `profile`, read from `profile_file` (the store's file of
// its cluster, `store_file`, or a version of it under versions/): its cluster, its NCCL, and as known digests
// the file's own, the store file's and every version the store published beside it. `profile` must outlive
// the result. Throws InputError when profile_file cannot be read.
TelemetryTrust store_trust(const profiles::Profile& profile, const std::filesystem::path& profile_file,
                           const std::filesystem::path& store_file);

// Every *.telemetry in `dir` (dot-files, the temporaries of an interrupted write, are not read), judged as
// above; the same file reached by two names (hard links) counts once. A missing directory gives none.
TelemetryRead read_telemetry(const std::filesystem::path& dir, const TelemetryTrust& trust);

}  // namespace autotune::calibrate
