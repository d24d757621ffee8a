#pragma once
// Fixed tables of names indexed by an id (NCCL's algorithm ids, hardware link classes, ...): the lookup that
// parsers use and the list that their error messages quote.

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace autotune {

// The index of `text` in `names` (exact match), or nullopt.
template <size_t N>
std::optional<int> index_of(const std::array<std::string_view, N>& names, std::string_view text) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<int>(i);
  return std::nullopt;
}

// "a, b, c", for "expected one of ..." messages; any range of names (an array, an initializer list).
template <class Names>
std::string join_names(const Names& names) {
  std::string out;
  for (auto n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace autotune
