#pragma once
// What production taught: jobs' telemetry (profiles/telemetry_file.hpp, written by the plugin under
// <store>/telemetry/) folded into the cluster's journal as records of source "production" (which derive()
// leaves out: they are not calibration measurements), and the profile's rules revised only where
// production evidence beats them beyond the noise, with tune's statistics (the
// interquartile ranges apart, and DeriveOptions::min_gain):
//  - an alternative NCCL ran in the same range (the runner-up explored, [online] explore) whose GPU times are
//    clearly faster than the rule's by more than min_gain replaces the rule's choice (the rule's old choice
//    becomes the runner-up); a runner-up explored that did not win retires (the range is decided: no more
//    exploration there);
//  - a rule whose production times are, all of their interquartile range, slower than NCCL's default was at
//    calibration (its default_busbw_gbps) by more than min_gain is dropped: NCCL decides there again.
// Pure functions over values, but read_telemetry reads files. Not thread-safe.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profiles/profile.hpp"
#include "profiles/telemetry_file.hpp"
#include "search/derive.hpp"
#include "search/journal.hpp"

namespace autotune::calibrate {

struct TelemetryFile {
  std::filesystem::path file;
  profiles::Telemetry telemetry;
};

// Every *.telemetry file in `dir` (temporary files of an interrupted write, which start with '.', are not
// read) whose cluster is `cluster`, sorted by name. A file that is not whole telemetry of this format (torn,
// foreign) throws InputError naming the file and line. A missing directory gives none.
std::vector<TelemetryFile> read_telemetry(const std::filesystem::path& dir, const std::string& cluster);

// Production evidence for one (shape, collective, size bucket, choice), pooled over files and ranks.
struct Evidence {
  int nodes = 0, ranks = 0, ranks_per_node = 0;
  nccl::Collective collective = nccl::Collective::allreduce;
  int bytes_log2 = 0;
  nccl::Algorithm algorithm = nccl::Algorithm::ring;
  nccl::Protocol protocol = nccl::Protocol::simple;
  int channels = 0;
  uint64_t count = 0;
  double mean_bytes = 0;
  double min_us = 0, p25_us = 0, p50_us = 0, p75_us = 0, max_us = 0;  // count-weighted over the rows
  std::vector<std::string> sources;                                   // file:line of each row pooled
};
std::vector<Evidence> pool(const std::vector<TelemetryFile>& files);

struct LearnChange {
  enum class Kind { replaced, dropped, runner_up_retired };
  Kind kind = Kind::dropped;
  profiles::Rule before;
  std::optional<profiles::Rule> after;  // absent when dropped
  std::string why;                      // one sentence with the figures
};
std::string_view name(LearnChange::Kind k);  // "replaced", "dropped", "runner-up retired"

struct LearnResult {
  profiles::Profile profile;  // the revised profile (rules only; the caller sets provenance)
  std::vector<LearnChange> changes;
  std::vector<Evidence> evidence;
  size_t files = 0;
};

// Collectives of one choice in one range needed before production evidence counts.
inline constexpr uint64_t kMinCalls = 16;

LearnResult learn(const profiles::Profile& current, const std::vector<TelemetryFile>& files,
                  const search::DeriveOptions& options);

// The pooled evidence as journal records (source "production", runner "telemetry"): times_us holds min,
// p25, p50, p75 and max, so tune's quantiles over them are the telemetry's.
std::vector<search::JournalRecord> production_records(const std::vector<Evidence>& evidence);

}  // namespace autotune::calibrate
