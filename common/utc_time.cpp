#include "common/utc_time.hpp"

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

}  // namespace autotune
