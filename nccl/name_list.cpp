#include "nccl/name_list.hpp"

#include <cctype>

#include "common/input_error.hpp"

namespace autotune::nccl {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

[[noreturn]] void fail(const NameListWords& w, const std::string& expected, std::string_view found) {
  throw InputError(
      "", 0, std::string(w.variable) + ": expected " + expected + "; found \"" + std::string(found) + "\"");
}

std::string a(std::string_view noun) {
  const bool vowel = !noun.empty() && std::string_view("aeiou").find(noun.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(noun);
}

}  // namespace

NameList split_name_list(std::string_view text, const NameListWords& w) {
  NameList list;
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '^') list.exclude = true, rest.remove_prefix(1);
  if (!rest.empty() && rest.front() == '=') list.exact = true, rest.remove_prefix(1);
  if (rest.empty()) fail(w, std::string(w.noun) + " names such as " + std::string(w.example), text);
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const size_t colon = item.find(':');
    const std::string_view name = item.substr(0, colon);
    if (name.empty()) fail(w, a(w.noun) + " name before each ',' or ':'", item);
    for (char c : name)
      if (!is_name_char(c))
        fail(w, a(w.noun) + " name (letters, digits, '_', '-', '.')", name);
    NameListEntry e{std::string(name), std::nullopt};
    if (colon != std::string_view::npos) e.port = std::string(item.substr(colon + 1));
    list.entries.push_back(std::move(e));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return list;
}

bool name_matches(std::string_view name, std::string_view listed, bool exact) {
  return exact ? name == listed : name.substr(0, listed.size()) == listed;
}

}  // namespace autotune::nccl
