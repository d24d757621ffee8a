#pragma once
// nccl-tests logs as calibration measurements: every complete row of each test in the files becomes one
// journal record (source "imported"; "simulated" for a table `bench --simulate` printed), so that a profile
// and a report can be made from logs people already have. What a log does not say comes from options: the
// candidate it was forced to (or that it ran NCCL's default choice), the rank and node counts; where the log
// does say it (NCCL_ALGO/NCCL_PROTO lines, nNodes, the rank lines and their hosts, bench's header), the log
// is used and an option that contradicts it wins with a warning. Every test that is not imported is named
// with its reason.
//
// Pure functions: no I/O, no state.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nccl_tests/nccl_tests_file.hpp"
#include "nccl_tests/nccl_tests_log.hpp"
#include "search/journal.hpp"

namespace autotune::nccl_tests {

struct ImportOptions {
  bool as_default = false;  // the logs ran NCCL's own choice: the baseline of every rule
  std::optional<nccl::Algorithm> algorithm;
  std::optional<nccl::Protocol> protocol;
  int channels = 0;          // forced channel count, 0 = NCCL decided
  std::optional<int> nodes;  // node count when the log cannot tell
  std::optional<int> ranks;  // rank count when the log cannot tell (a table alone)
  std::string cluster;       // cluster name for the journal header; default: the first rank's host
  std::string fingerprint;   // topology fingerprint, when known
  std::string command;       // the command line, for provenance
  std::string time;          // RFC 3339 time stamped on every record
};

// A test of a file that gave no record, and why.
struct NotImported {
  std::string test;  // NcclTestsLog::name(), or "file:lines" of a test that could not be read
  std::string reason;
};

struct ImportResult {
  search::JournalHeader header;
  std::vector<search::JournalRecord> records;
  std::vector<NotImported> not_imported;
  std::vector<std::string> warnings;  // "file:line: text", for people
  int tests = 0;                      // in all files, readable or not
  int tests_imported = 0;             // that gave at least one record
};

// The candidate a log measured, from options and the log's NCCL_ALGO/NCCL_PROTO lines. Throws InputError
// (naming the log) when neither says, when the log forced a list rather than one choice, or when NCCL cannot
// run that algorithm and protocol for the log's collective.
runners::Candidate imported_candidate(const NcclTestsLog& log, const ImportOptions& options,
                                      std::vector<std::string>* warnings = nullptr);

// Converts the tests of every file into a journal header and records. alltoall, sendrecv, gather and
// scatter tests become records of those operations (nothing forced, whatever the options say; no rule can
// come of them: NCCL's tuner never sees point-to-point; the header's collectives list only collectives).
// Not imported, each with its reason: tests that could not be read, and a test of another data type,
// reduction or CUDA-graph mode than the first imported for the same collective, scale and candidate (NCCL's
// tuner sees bytes only; unlike timings are not pooled). Rows with wrong results become `wrong_result`
// records, never rules. Each record keeps the busbw nccl-tests printed for both halves. Throws InputError
// when a test does not show its scale and no option gives it, and when nothing at all can be imported (the
// message names every test and its reason).
ImportResult import_nccl_tests(std::span<const NcclTestsFile> files, const ImportOptions& options);

}  // namespace autotune::nccl_tests
