#pragma once
// Splitting, trimming and joining text, one way for the whole project: at a separator, every part kept
// ("a,,b" gives "a", "", "b"; "" gives one empty part), or at runs of whitespace (no empty parts); and text
// from outside made fit for a one-line message. Pure functions: thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune {

// The parts view `text`: they live as long as it does.
std::vector<std::string_view> split(std::string_view text, char separator);

std::vector<std::string> split_whitespace(std::string_view text);

// What std::isspace says in the "C" locale, without a call per character (logs of hundreds of MB).
inline bool is_blank(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

// `text` for an error line: control characters and bytes beyond ASCII as \xNN (a newline or NUL cannot
// split or cut the line), and at most `max_chars` of it, then "..." (a 10 MB key is not echoed whole).
std::string printable(std::string_view text, size_t max_chars = 80);

// Whether `a` and `b` are equal ignoring ASCII case ("AllReduce" and "allreduce").
bool iequals(std::string_view a, std::string_view b);

// `text` without the whitespace (isspace: blanks, tabs, CR, LF...) at either end; a view of `text`.
std::string_view trim(std::string_view text);

// `value` to three significant digits, as printf's %.3g writes it: "0.25", "146", "1.05e+06".
std::string three_digits(double value);

// The parts with `separator` between them: {"a", "b"} and ", " give "a, b".
std::string join(const std::vector<std::string>& parts, std::string_view separator);

// `text` as a count: a whole decimal number from 1 up that is all of it ("8"; not "", "0", "8x", "-2" or
// " 8"), nullopt otherwise.
std::optional<int> parse_positive(std::string_view text);

}  // namespace autotune
