#pragma once
// The one way the project writes a time: RFC 3339 in UTC to the second, "2026-11-30T04:37:15Z" (journals,
// profiles' provenance, job events). Thread-safe.

#include <ctime>
#include <string>

namespace autotune {

std::string utc_timestamp(std::time_t time);
std::string utc_timestamp_now();

}  // namespace autotune
