#include "common/utc_time.hpp"

#include <cstdio>

namespace autotune {

std::string utc_timestamp(std::time_t time) {
  std::tm tm{};
  gmtime_r(&time, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string utc_timestamp_now() {
  return utc_timestamp(std::time(nullptr));
}

std::optional<std::time_t> parse_utc_timestamp(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
  const std::string t(text);
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &used) != 6 || used != 19)
    return std::nullopt;
  size_t i = 19;
  if (i < t.size() && t[i] == '.')
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9';) ++i;
  long offset = 0;
  if (i < t.size() && t[i] == 'Z' && i + 1 == t.size()) {
  } else if (i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && t[i + 3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(t.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2 || oh > 23 || om > 59) return std::nullopt;
    offset = (t[i] == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
  } else {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return ::timegm(&tm) - offset;
}

}  // namespace autotune
