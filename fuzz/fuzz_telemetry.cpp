// Fuzzes the telemetry reader (profiles/telemetry_file.hpp): any user of the cluster can plant a file in
// <store>/telemetry/, so every byte is hostile. A file either is refused with an InputError or parses to rows
// that row_problem() accepts, writes back (format_telemetry) as a file that parses to the same text again,
// and can be judged for plausibility (calibrate/telemetry_trust.hpp) without crashing. Anything else is a
// bug.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "calibrate/telemetry_trust.hpp"
#include "common/input_error.hpp"
#include "profiles/telemetry_file.hpp"

namespace {

[[noreturn]] void bug(const char* what, const std::string& text) {
  std::fprintf(stderr, "%s:\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  autotune::profiles::Telemetry t;
  try {
    t = autotune::profiles::parse_telemetry(text, "fuzz.telemetry");
  } catch (const autotune::InputError&) {
    return 0;
  }
  const autotune::profiles::Profile no_rules;
  for (const auto& row : t.rows) {
    if (autotune::profiles::row_problem(row))
      bug("a row the reader accepted is one no row can be", std::string(text));
    (void)autotune::calibrate::implausible(row, no_rules);
  }
  const std::string once = autotune::profiles::format_telemetry(t);
  autotune::profiles::Telemetry again;
  try {
    again = autotune::profiles::parse_telemetry(once, "written.telemetry");
  } catch (const autotune::InputError& e) {
    bug("a parsed telemetry file writes back as one that does not parse", once + "\n" + e.what());
  }
  if (autotune::profiles::format_telemetry(again) != once) bug("telemetry does not round-trip", once);
  return 0;
}
