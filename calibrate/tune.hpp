#pragma once
// The whole `tune` command as a library function: build the search space, run the strategy in every job
// (process-wide setting) at every scale through a Runner, journal every batch (replaying what a journal
// already holds on --resume), keep to the time budget, derive the rules and the [env] choice, and build the
// profile. The CLI only parses options, prints and saves. Not thread-safe; progress is reported through a
// callback on the calling thread.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibrate/scale_prediction.hpp"
#include "common/clock.hpp"
#include "profiles/profile.hpp"
#include "runners/process_group.hpp"
#include "search/derive.hpp"
#include "search/journal.hpp"
#include "search/search_space.hpp"
#include "search/strategy.hpp"

namespace autotune::calibrate {

// Makes the runner for one job at one scale; called only when something must really be measured there.
using RunnerFactory =
    std::function<std::unique_ptr<runners::Runner>(const runners::ProcessSetting&, const runners::Scale&)>;

struct TuneOptions {
  search::SearchSpaceOptions space;
  std::string strategy = "adaptive";
  search::AdaptiveOptions adaptive;
  int repetitions = 5;
  double min_gain = 0.03;
  PredictOptions predict;  // which large scales are predicted and confirmed (calibrate/scale_prediction.hpp)
  std::optional<std::chrono::duration<double>> budget;  // wall time for the measurements
  std::filesystem::path journal;  // where every measurement goes (required unless dry_run)
  bool resume = false;  // continue the journal instead of starting a new one (the old one is kept aside)
  // Provenance written into the journal header (the parameters are filled in by tune()).
  search::JournalHeader header;
  // The job's processes: under MPI every process runs tune() and sees the same measurements; root alone
  // writes the journal, and every decision that changes what is measured (the budget, a journal write that
  // failed) is root's, taken by all. Null = this process alone.
  const runners::ProcessGroup* processes = nullptr;
  const Clock* clock = nullptr;  // null = the steady clock
  // A line for people as something happens outside the measurements (a previous journal kept aside).
  std::function<void(const std::string&)> say;
  // A worker measuring one scale beside others (calibrate/concurrent_scales.hpp): that scale (the others of
  // the plan are neither measured nor replayed; their journaled records still feed a predicted scale's fit),
  // and the allocation's nodes it runs on, journaled with every measurement; empty = the whole job.
  std::optional<runners::Scale> only_scale;
  std::string nodes_used;
};

struct TuneProgress {
  int jobs_done = 0;
  int jobs_total = 0;
  std::string job;  // setting id and scale being measured
  uint64_t measurements_done = 0;
  uint64_t measurements_planned = 0;
  uint64_t sizes_done = 0;  // distinct (collective, size) points measured in this job
  double elapsed_s = 0.0;
  double remaining_s = -1.0;  // estimate; negative = unknown
  bool job_finished = false;  // this report closes a job
  std::string measuring;      // what the runner is measuring now: "allreduce 1 MiB ring/simple (+14 more)"
};
using ProgressFn = std::function<void(const TuneProgress&)>;

struct JobResult {
  runners::ProcessSetting setting;
  runners::Scale scale;
  uint64_t measured = 0;  // measurements made now
  uint64_t replayed = 0;  // measurements taken from the journal (--resume)
  uint64_t shared = 0;    // the first setting's measurements that count here too (measures_itself)
  std::vector<std::string> skipped;
  bool failed = false;
  std::string detail;  // why it failed
  // Doubts the repetition rounds left unsettled (search/repetition_rounds.hpp): decided on what was measured.
  std::vector<std::string> given_up = {};
  uint64_t predicted = 0;       // predicted times journaled (a predicted scale whose confirmations agreed)
  std::string prediction = {};  // what became of a predicted scale, in words; empty for the others
};

// One scale of the plan, over the jobs (process-wide settings) that measure it: a one-node shape is measured
// by the first job and by those whose setting reaches one node (runners::reaches_one_node) only.
struct ScalePlan {
  runners::Scale scale;
  int jobs = 0;
  uint64_t measurements = 0;
  double estimated_s = 0.0;
  bool predicted = false;  // only the confirmations are planned (calibrate/scale_prediction.hpp)
};

struct TunePlan {
  search::SearchSpace space;
  std::string strategy;
  uint64_t measurements = 0;      // planned, over all jobs and scales
  double estimated_s = 0.0;       // on real GPUs, from a rough bandwidth model (see plan_tune)
  std::vector<ScalePlan> scales;  // in the space's order
};

// Whether `setting` measures `scale` itself, or takes the first setting's measurements of it (a one-node
// shape under a setting that only chooses the network between nodes).
bool measures_itself(const search::SearchSpace& space, const runners::ProcessSetting& setting,
                     const runners::Scale& scale);

// The first setting's measurements at `scale` as `setting`'s, each saying where it was measured
// (JournalRecord::measured_under).
std::vector<search::JournalRecord> shared_records(const std::vector<search::JournalRecord>& records,
                                                  const runners::ProcessSetting& first,
                                                  const runners::ProcessSetting& setting,
                                                  const runners::Scale& scale);

struct TuneResult {
  TunePlan plan;
  search::JournalHeader header;
  std::vector<JobResult> jobs;
  search::Derivation derivation;
  profiles::Profile profile;
  uint64_t measured = 0;
  uint64_t replayed = 0;
  uint64_t shared = 0;  // one-node measurements counted for another setting too (JobResult::shared)
  std::vector<std::string>
      journal_skipped;  // journal lines that could not be read, each named (--from-journal)
  // Per shape and point-to-point operation, what was measured of it (calibrate/p2p_summary.hpp): no rule
  // comes of those.
  std::vector<std::string> point_to_point;
  // Groups of a shape measured several at once that ran slower than the shape's median group
  // (calibrate/spread_findings.hpp): a straggler node, GPU or NIC; empty when none did.
  std::vector<std::string> slow_groups;
};

// The plan without measuring anything (--dry-run). The time estimate assumes 100 GB/s of bus bandwidth,
// 20 operations per repetition and 10 us of latency per operation, plus 50 ms per measurement.
TunePlan plan_tune(const TuneOptions& options);

// The journal header of a calibration: the options' provenance plus the plan's parameters.
search::JournalHeader calibration_header(const TuneOptions& options, const TunePlan& plan);

// Runs the calibration. Throws InputError for bad options or a journal that does not match on --resume;
// a job whose runner cannot start or dies is recorded as failed and the others go on; throws
// JournalWriteError on every process when the journal cannot be written (what it already holds is kept), and
// std::runtime_error when no job produced anything to derive from.
TuneResult tune(const TuneOptions& options, const RunnerFactory& runners, const ProgressFn& progress = {});

// Re-derives from a journal with other thresholds, measuring nothing (--from-journal).
TuneResult tune_from_journal(const std::filesystem::path& journal, const search::DeriveOptions& options);

// The profile for a derivation: rules, [env], provenance and cluster from the journal header.
profiles::Profile build_profile(const search::Derivation& derivation, const search::JournalHeader& header);

// What every calibration ends with, from all its records and result.header: the derivation, the profile
// built from it, what was measured of point-to-point operations, and the groups that ran slow. In process,
// orchestrated and from a journal alike.
void conclude(TuneResult& result, std::span<const search::JournalRecord> records,
              const search::DeriveOptions& options);

}  // namespace autotune::calibrate
