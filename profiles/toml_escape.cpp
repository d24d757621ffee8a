#include "profiles/toml_escape.hpp"

#include <cstdio>
#include <optional>
#include <utility>

namespace autotune::profiles {

namespace {

// The UTF-8 sequence at s[i]: its code point and length, or nullopt when it is not well formed.
std::optional<std::pair<char32_t, size_t>> utf8_at(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  const size_t length = lead >= 0xF0 && lead <= 0xF4  ? 4
                        : lead >= 0xE0                ? 3
                        : lead >= 0xC2 && lead < 0xE0 ? 2
                                                      : 0;
  if (length == 0 || i + length > s.size()) return std::nullopt;
  char32_t code = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return std::nullopt;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
  return std::pair{code, length};
}

}  // namespace

// Profiles are ASCII (parse_profile refuses anything else), so text from outside, such as a command line
// with a non-ASCII path or a GPU name, is written with TOML escapes; bytes that are not UTF-8 become U+FFFD.
std::string toml_string(std::string_view s) {
  auto plain = [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  };
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    size_t run = i;
    while (run < s.size() && plain(s[run])) ++run;
    out.append(s.data() + i, run - i);
    if (run == s.size()) break;
    char c = s[run];
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default: {
        char32_t code = static_cast<unsigned char>(c);
        size_t length = 1;
        if (code >= 0x80) {
          const auto decoded = utf8_at(s, run);
          code = decoded ? decoded->first : 0xFFFD;
          length = decoded ? decoded->second : 1;
        }
        char buf[16];
        if (code > 0xFFFF)
          std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(code));
        else
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(code));
        out += buf;
        i = run + length;
        continue;
      }
    }
    i = run + 1;
  }
  out += '"';
  return out;
}

std::string toml_string_array(const std::vector<std::string>& items, std::string_view separator) {
  const bool multiline = separator.find('\n') != std::string_view::npos;
  std::string out = "[";
  for (size_t k = 0; k < items.size(); ++k)
    out += std::string(k && !multiline ? "," : "") + (k || multiline ? std::string(separator) : "") +
           toml_string(items[k]) + (multiline ? "," : "");
  return out + (multiline ? "\n]" : "]");
}

}  // namespace autotune::profiles
