#pragma once
// Message sizes as people write them: "8", "64K", "1M", "8G", "2T" with binary units (K = 1024), as
// nccl-tests' -b/-e options take them. Formatting picks the largest unit that divides the value exactly, so
// format then parse is the identity.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace autotune {

inline constexpr uint64_t kKiB = 1ULL << 10, kMiB = 1ULL << 20, kGiB = 1ULL << 30;

// Digits, then optionally one of K, M, G, T (either case) and an optional trailing B ("64KB" = "64K").
// nullopt for anything else, for a value that does not fit in 64 bits, and for signs or spaces.
std::optional<uint64_t> parse_byte_size(std::string_view text);

// The same for a value the user gave: throws InputError("<arguments>", 0, "<what>: expected a size such as 8,
// 64K, 1M or 8G, found '...'") instead of returning nullopt.
uint64_t require_byte_size(std::string_view text, const std::string& what);

// "0", "8", "1536K", "1M", "8G".
std::string format_byte_size(uint64_t bytes);

// A rounded reading for tables ("1.5 MiB" style, but short): "8 B", "1.5 KiB", "64 MiB", "8 GiB".
std::string human_byte_size(uint64_t bytes);

}  // namespace autotune
