#pragma once
// The one way the project writes a time: RFC 3339 in UTC to the second, "2026-11-30T04:37:15Z" (journals,
// profiles' provenance, job events). Thread-safe.

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace autotune {

std::string utc_timestamp(std::time_t time);
std::string utc_timestamp_now();
// The time such a string names ("Z" or a "+hh:mm"/"-hh:mm" offset; fractions of a second ignored); nullopt
// for anything else.
std::optional<std::time_t> parse_utc_timestamp(std::string_view text);

}  // namespace autotune
