#pragma once
// Splitting text, one way for the whole project: at a separator, every part kept ("a,,b" gives "a", "", "b";
// "" gives one empty part), or at runs of whitespace (no empty parts). Pure functions: thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace autotune {

// The parts view `text`: they live as long as it does.
std::vector<std::string_view> split(std::string_view text, char separator);

std::vector<std::string> split_whitespace(std::string_view text);

}  // namespace autotune
