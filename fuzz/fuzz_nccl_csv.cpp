// Fuzzes the NCCL example-plugin CSV importer (parse_nccl_csv). Rules it accepts must export again
// (format_nccl_csv) unless their scale is open-ended, and the export must import back to the same rules.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/input_error.hpp"
#include "profiles/nccl_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune::profiles;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Rule> rules;
  try {
    rules = parse_nccl_csv(text, "fuzz.csv");
  } catch (const autotune::InputError&) {
    return 0;
  }
  std::string exported;
  try {
    exported = format_nccl_csv(rules);
  } catch (const autotune::InputError&) {
    return 0;  // a rule the CSV cannot express (documented: open-ended scales, too many rows)
  }
  try {
    const std::string again = format_nccl_csv(parse_nccl_csv(exported, "exported.csv"));
    if (again != exported) {
      std::fprintf(stderr, "CSV export does not round-trip:\n%s\n---\n%s\n", exported.c_str(), again.c_str());
      std::abort();
    }
  } catch (const autotune::InputError& e) {
    std::fprintf(stderr, "exported CSV does not import: %s\n%s\n", e.what(), exported.c_str());
    std::abort();
  }
  return 0;
}
