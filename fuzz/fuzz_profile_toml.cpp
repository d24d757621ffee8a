// Fuzzes the profile reader (TOML + validation): any byte string either parses into a profile that
// validates and round-trips byte-stable through format_profile, or is refused with an InputError. Any other
// exception, a crash, a sanitizer report or a round trip that changes the text is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/input_error.hpp"
#include "profiles/profile_toml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune::profiles;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Profile profile;
  try {
    profile = parse_profile(text, "fuzz.toml");
  } catch (const autotune::InputError&) {
    return 0;
  }
  // Accepted input must be as good as a profile written by the tool itself.
  validate_profile(profile, "fuzz.toml");
  const std::string once = format_profile(profile);
  Profile again;
  try {
    again = parse_profile(once, "formatted.toml");
  } catch (const autotune::InputError& e) {
    std::fprintf(stderr, "accepted profile formats to text that does not read back: %s\n%s\n", e.what(),
                 once.c_str());
    std::abort();
  }
  if (format_profile(again) != once) {
    std::fprintf(stderr, "format(parse(format(p))) != format(p):\n%s\n", once.c_str());
    std::abort();
  }
  return 0;
}
