#pragma once
// Splitting text, one way for the whole project: at a separator, every part kept ("a,,b" gives "a", "", "b";
// "" gives one empty part), or at runs of whitespace (no empty parts); and text from outside made fit for a
// one-line message. Pure functions: thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace autotune {

// The parts view `text`: they live as long as it does.
std::vector<std::string_view> split(std::string_view text, char separator);

std::vector<std::string> split_whitespace(std::string_view text);

// `text` for an error line: control characters and bytes beyond ASCII as \xNN (a newline or NUL cannot
// split or cut the line), and at most `max_chars` of it, then "..." (a 10 MB key is not echoed whole).
std::string printable(std::string_view text, size_t max_chars = 80);

}  // namespace autotune
