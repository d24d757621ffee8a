// Fuzzes the nccl-tests file parser (parse_nccl_tests_file: the split into tests, each test's text parser, the
// -J JSON reader): logs come from jobs that were killed, interleaved with NCCL_DEBUG output, or from other
// versions. Any text must parse or be refused with an InputError; the
// per-input timeout (scripts/fuzz.sh: -timeout=5) catches the parser's regular expressions going exponential.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/input_error.hpp"
#include "nccl_tests/nccl_tests_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune::nccl_tests;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const NcclTestsFile file = parse_nccl_tests_file(text, "all_reduce_perf.log");
    for (const NcclTestsLog& log : file.tests) {
      (void)log.ranks();
      (void)log.hosts();
      (void)log.nccl_collective();
      (void)log.name();
    }
  } catch (const autotune::InputError&) {
  }
  return 0;
}
