#pragma once
// A file of nccl-tests output as people publish it: several tests one after another (a job script running
// all_reduce_perf, then all_gather_perf, ...), each read on its own. A test starts at the first of its header
// lines once the previous test has shown its own: `# nccl-tests version` and `# Collective test starting:`
// (nccl-tests 2.17+), a harness's `Running: ... ./build/all_reduce_perf ...` line (the oldest logs), a
// `# nThread ...` line, `nccl-autotune bench`'s own header; `-J` JSON output holds one test per document.
// A test that cannot be read (one killed before its first row, say) is set aside with its reason while the
// others are kept.
//
// Pure functions over text (read_nccl_tests_file reads the file first): safe from any thread.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl_tests/nccl_tests_log.hpp"

namespace autotune::nccl_tests {

struct NcclTestsUnreadable {
  std::string where;   // "all.log:120-151"
  std::string reason;  // the parser's message
};

struct NcclTestsFile {
  std::string file;
  std::vector<NcclTestsLog> tests;              // in file order
  std::vector<NcclTestsUnreadable> unreadable;  // tests set aside, in file order
};

// The line ranges [first, last] (1-based) of the tests in a text log, in order; one range when the text
// holds one test (or none: the parser then says why).
std::vector<std::pair<int, int>> split_tests(std::string_view text);

// Splits and parses. `collective`, when given, names the collective of every test (see
// parse_nccl_tests_log). Throws InputError when no test in the file can be read: the parser's own error for a
// file of one test, else one naming each test and its reason.
NcclTestsFile parse_nccl_tests_file(std::string_view text, const std::string& file,
                                    std::optional<std::string> collective = std::nullopt);

NcclTestsFile read_nccl_tests_file(const std::filesystem::path& path,
                                   std::optional<std::string> collective = std::nullopt);

}  // namespace autotune::nccl_tests
