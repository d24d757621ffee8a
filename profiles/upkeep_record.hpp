#pragma once
// What the store keeps of the upkeep commands' last runs, so that an operator's dashboards and timers can see
// them: the last `verify` of each cluster (its verdict and the NCCL and driver it ran under, which a timer
// compares with the node's to tell whether to verify again) and the last health check of each node (its
// status and whether it drained the node). One small TOML file per command and subject under
// <store>/status/, written atomically, the newest run replacing the one before. Thread-compatible.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace autotune::profiles {

struct UpkeepRecord {
  std::string command;  // "verify" or "check"
  std::string subject;  // verify: the cluster's name; check: the node's
  // verify: "ok" (no rule now loses) or "fail"; check: "ok", "warn" or "block" (topology::node_status)
  std::string result;
  int64_t time = 0;                          // unix seconds the run ended
  std::string detail;                        // one line for people: the verdicts, the finding
  std::map<std::string, std::string> facts;  // "nccl", "driver" (verify); "drained" = "true" (check)
};

// <store>/status/<command>-<subject made file-name safe>.toml
std::filesystem::path upkeep_record_path(const std::filesystem::path& store, const UpkeepRecord& r);

// Throws InputError for a command other than verify or check, an empty subject or result; std::runtime_error
// when the file cannot be written.
void write_upkeep_record(const std::filesystem::path& store, const UpkeepRecord& record);

// The record of `command` for `subject`, nullopt when there is none. Throws InputError (file, line, what was
// expected) for a file that is not a record.
std::optional<UpkeepRecord> read_upkeep_record(const std::filesystem::path& store, const std::string& command,
                                               const std::string& subject);

struct UpkeepRecords {
  std::vector<UpkeepRecord> records;  // sorted by file name
  std::vector<std::string> refused;   // "FILE:LINE: expected ..." for each file that is not a record
};
// Every record in <store>/status/; a missing folder gives none.
UpkeepRecords read_upkeep_records(const std::filesystem::path& store);

}  // namespace autotune::profiles
