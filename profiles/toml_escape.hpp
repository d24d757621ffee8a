#pragma once
// TOML text for values from outside: quoted strings with TOML's escapes (profiles are ASCII, so anything else
// is escaped; bytes that are not UTF-8 become U+FFFD) and arrays of them. Pure functions: thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace autotune::profiles {

std::string toml_string(std::string_view s);
// ["a", "b"]: items after `separator` (" ", or a line break and indent for long lists, one item per line).
std::string toml_string_array(const std::vector<std::string>& items, std::string_view separator);

}  // namespace autotune::profiles
