#pragma once
// One profile per job. The first rank of a job to resolve a profile records it in a directory all its nodes
// share (pin_directory: <job>.pin, the profile's path and digest), and every later rank takes that one,
// even when the store changed meanwhile or a node sees it differently: ranks of one communicator that chose
// from different profiles would hang or corrupt data in NCCL. The record is created by one atomic link, so
// two ranks racing both end with the same pin. Pins older than a week are removed when a new one is made.
// Thread-safe across processes (the link); one call at a time per process.

#include <filesystem>
#include <optional>
#include <string>

#include "launcher/environment.hpp"

namespace autotune::launcher {

struct JobPin {
  std::filesystem::path profile;
  std::string digest;  // 16 hex digits (profiles/compiled_rules.hpp: digest_text)
  bool operator==(const JobPin&) const = default;
};

// Where pins are kept: $NCCL_AUTOTUNE_PIN_DIR; else <store>/jobs when this user may write the store; else
// the user's cache ($XDG_CACHE_HOME, or $HOME/.cache, /nccl-autotune/jobs), which clusters share between
// nodes as they share home directories. A directory that is not shared only costs the agreement: each node
// then pins alone, which still holds unless the store changes while the job starts.
std::filesystem::path pin_directory(const std::filesystem::path& store, const EnvLookup& env);

// The job's pin: the one already recorded, or `mine` once recorded. nullopt, with *note saying why, when the
// directory cannot hold pins (not writable, a pin that does not parse): every rank then resolves on its own.
std::optional<JobPin> pin_job(const std::filesystem::path& dir, const std::string& job_id, const JobPin& mine,
                              std::string* note);

// Where a job's pin lives.
std::filesystem::path pin_path(const std::filesystem::path& dir, const std::string& job_id);

}  // namespace autotune::launcher
