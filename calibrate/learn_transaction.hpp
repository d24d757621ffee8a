#pragma once
// `learn` as one transaction (docs/online.md, "learn"): it appends production records to the cluster's
// journal, publishes a profile version and moves the telemetry it read to telemetry/learned/. Killed between
// or inside any of these and rerun, the result equals one uninterrupted run: before its first write it
// records the whole plan (the records with its id, the version's exact text, the files to retire) in
// <store>/.learn-transaction.json (written atomically), marks each step done in it, and every step is
// idempotent (the journal's records carrying the id are not appended again, a version already in place is
// not saved again, a file already moved is not moved again). The next learn finds a pending plan and finishes
// it before anything else. One learn per store (a RunLock on <store>/.learn.lock) and no calibration or
// import writing the journal meanwhile (its lock, held from plan to end). Not thread-safe.

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/learn.hpp"

namespace autotune::calibrate {

struct LearnRequest {
  std::filesystem::path profile;  // the profile to revise (the store's file, or a version under versions/)
  std::filesystem::path store;
  LearnOptions options;
  bool dry_run = false;  // judge and say; take no lock, write nothing, finish no pending plan
  std::string command;   // provenance of a published version
  // Called after each step is recorded done: "planned", "folded", "published", "retired", "done". For
  // progress; the kill-point test stops the process there.
  std::function<void(std::string_view step)> after_step;
};

struct LearnOutcome {
  LearnResult result;
  std::vector<RefusedTelemetry> refused;     // telemetry not believed, not counted, left in place
  std::vector<std::string> journal_skipped;  // journal lines that could not be read (named)
  std::string published;                     // "<file> (digest <16 hex>)" when a version was published
  std::string finished_pending;              // what a pending plan of an interrupted learn was, when finished
};

// Where the plan of a learn in progress is kept.
std::filesystem::path learn_transaction_path(const std::filesystem::path& store);

// Throws InputError for a bad profile, a lock held by another run (naming it), a revised profile that does
// not validate (before anything is written), or a telemetry/learned that is a link or not the store
// owner's; std::runtime_error when a step cannot be done (the plan stays, the next learn finishes it).
LearnOutcome run_learn(const LearnRequest& request);

}  // namespace autotune::calibrate
