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
//    calibration (its default_busbw_gbps; for a rule without it, made by hand, imported or older, NCCL's
//    default in the calibration journal at that shape and size) by more than min_gain is dropped: NCCL
//    decides there again.
// Evidence counts only when it comes from enough jobs and users (LearnOptions): one user's jobs alone do not
// steer the cluster. Which telemetry is believed at all: calibrate/telemetry_trust.hpp. Pure functions over
// values. Not thread-safe.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "calibrate/telemetry_trust.hpp"
#include "profiles/profile.hpp"
#include "profiles/telemetry_file.hpp"
#include "search/derive.hpp"
#include "search/journal.hpp"

namespace autotune::calibrate {

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
  std::set<std::string> jobs, users;                                  // who contributed
};
std::vector<Evidence> pool(const std::vector<TelemetryFile>& files);

// Who decided an aggregate's calls: the first rule of `profile` covering its collective, shape and size when
// the calls ran the rule's choice (rule) or its runner-up (explore, [online] explore), else NCCL's own
// choice.
enum class Decider { rule, explore, nccl };
std::string_view name(Decider d);  // "rule", "explore", "nccl"
Decider decider(const profiles::Profile& profile, const Evidence& e);

// "2 jobs (j1, j2) of 1 user (alice)": who an aggregate's evidence comes from.
std::string contributors_text(const Evidence& e);

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
  std::vector<std::string> held_back;  // evidence not counted for want of jobs or users, and why
  size_t files = 0;
};

// Collectives of one choice in one range needed before production evidence counts.
inline constexpr uint64_t kMinCalls = 16;

struct LearnOptions {
  search::DeriveOptions derive;
  // Evidence counts only from at least this many distinct jobs and users (the telemetry files' owners). The
  // store's owner, who runs learn, may lower them (a cluster with one user).
  int min_jobs = 2;
  int min_users = 2;
};

// NCCL's default as the calibration measured it (the journal's ok records of NCCL's own choice under its
// process-wide defaults, production records left out), for rules that carry no default_busbw_gbps.
struct CalibrationDefaults {
  struct Point {
    nccl::Collective collective;
    int nodes, ranks;
    uint64_t bytes;
    double busbw_gbps;
  };
  std::vector<Point> points;
  // The point of this collective and shape whose size is closest to `bytes` within [bytes/2, 2*bytes].
  std::optional<double> busbw_near(nccl::Collective c, int nodes, int ranks, double bytes) const;
};
CalibrationDefaults calibration_defaults(std::span<const search::JournalRecord> records);

LearnResult learn(const profiles::Profile& current, const std::vector<TelemetryFile>& files,
                  const LearnOptions& options, const CalibrationDefaults& defaults = {});

// The pooled evidence as journal records (source "production", runner "telemetry"): times_us holds min,
// p25, p50, p75 and max, so tune's quantiles over them are the telemetry's; `learn_id` marks the learn
// transaction that folds them (calibrate/learn_transaction.hpp).
std::vector<search::JournalRecord> production_records(const std::vector<Evidence>& evidence,
                                                      const std::string& learn_id = "");

}  // namespace autotune::calibrate
