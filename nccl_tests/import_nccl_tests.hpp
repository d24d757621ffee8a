#pragma once
// nccl-tests logs as calibration measurements: every complete row of a parsed log becomes one journal record
// (source "imported"), so that a profile and a report can be made from logs people already have. What a log
// does not say comes from options: the candidate it was forced to (or that it ran NCCL's default choice), the
// node count; where the log does say it (NCCL_ALGO/NCCL_PROTO lines, nNodes, the hosts of the rank lines),
// the log is used and an option that contradicts it wins with a warning.
//
// Pure functions: no I/O, no state.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nccl_tests/nccl_tests_log.hpp"
#include "tuner/journal.hpp"

namespace autotune::nccl_tests {

using tuner::JournalHeader;
using tuner::JournalRecord;

using runners::Candidate;

struct ImportOptions {
  bool as_default = false;  // the logs ran NCCL's own choice: the baseline of every rule
  std::optional<nccl::Algorithm> algorithm;
  std::optional<nccl::Protocol> protocol;
  int channels = 0;          // forced channel count, 0 = NCCL decided
  std::optional<int> nodes;  // node count when the log cannot tell
  std::string cluster;       // cluster name for the journal header; default: the first rank's host
  std::string fingerprint;   // topology fingerprint, when known
  std::string command;       // the command line, for provenance
  std::string time;          // RFC 3339 time stamped on every record
};

struct ImportResult {
  JournalHeader header;
  std::vector<JournalRecord> records;
  std::vector<std::string> warnings;  // "file:line: text", for people
};

// The candidate a log measured, from options and the log's NCCL_ALGO/NCCL_PROTO lines. Throws InputError
// (naming the log) when neither says, when the log forced a list rather than one choice, or when NCCL cannot
// run that algorithm and protocol for the log's collective.
Candidate imported_candidate(const NcclTestsLog& log, const ImportOptions& options,
                             std::vector<std::string>* warnings = nullptr);

// Converts logs into a journal header and records. Logs of alltoall and sendrecv (point-to-point, which
// NCCL's tuner never sees) are skipped with a warning; rows with wrong results become `wrong_result` records,
// never rules. Throws InputError when no log has a row that can be imported.
ImportResult import_nccl_tests(std::span<const NcclTestsLog> logs, const ImportOptions& options);

}  // namespace autotune::nccl_tests
