#include "common/byte_size.hpp"

#include <array>
#include <cctype>
#include <cstdio>

#include "common/input_error.hpp"

namespace autotune {
namespace {
constexpr std::array<char, 4> kUnits = {'K', 'M', 'G', 'T'};
}

std::optional<uint64_t> parse_byte_size(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - d) / 10) return std::nullopt;
    value = value * 10 + d;
  }
  std::string_view rest = text.substr(digits);
  int shift = 0;
  if (!rest.empty()) {
    char u = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
    bool known = false;
    for (size_t i = 0; i < kUnits.size(); ++i)
      if (u == kUnits[i]) shift = 10 * static_cast<int>(i + 1), known = true;
    if (known) rest.remove_prefix(1);
    if (rest == "B" || rest == "b") rest.remove_prefix(1);
    if (!rest.empty()) return std::nullopt;
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

uint64_t require_byte_size(std::string_view text, const std::string& what) {
  if (auto v = parse_byte_size(text)) return *v;
  throw InputError("<arguments>", 0,
                   what + ": expected a size such as 8, 64K, 1M or 8G, found '" + std::string(text) + "'");
}

std::string format_byte_size(uint64_t bytes) {
  if (bytes == 0) return "0";
  int unit = 0;
  while (unit < static_cast<int>(kUnits.size()) && bytes % 1024 == 0) bytes /= 1024, ++unit;
  std::string out = std::to_string(bytes);
  if (unit > 0) out += kUnits[unit - 1];
  return out;
}

std::string human_byte_size(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kNames = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < kNames.size()) v /= 1024.0, ++unit;
  char buf[32];
  if (unit == 0 || v == static_cast<double>(static_cast<uint64_t>(v)))
    std::snprintf(buf, sizeof buf, "%.0f %s", v, kNames[unit]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kNames[unit]);
  return buf;
}

}  // namespace autotune
