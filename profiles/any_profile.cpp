#include "profiles/any_profile.hpp"

#include <optional>
#include <utility>

#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"

namespace autotune::profiles {

bool looks_like_nccl_csv(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line = line.substr(first);
    if (line[0] == '[') return false;
    size_t comma = line.find(','), equals = line.find('=');
    return comma != std::string_view::npos && (equals == std::string_view::npos || comma < equals);
  }
  return false;
}

ProfileRead read_any_profile(const std::string& path, const std::string& text, bool use_compiled) {
  ProfileRead out;
  if (looks_like_nccl_csv(text)) {
    out.format = "CSV";
    out.profile.provenance.source = Source::imported;
    out.profile.provenance.command = "NCCL example tuner plugin CSV";
    CsvRules csv = read_nccl_csv(text);
    out.profile.rules = std::move(csv.rules);
    out.skipped = std::move(csv.skipped);
    return out;
  }
  std::optional<Profile> compiled;
  if (use_compiled) compiled = read_with_trusted_compiled_rules(path, text);
  if (compiled) {
    out.profile = std::move(*compiled);
    out.format = "TOML, compiled rules";
  } else {
    out.profile = parse_profile(text, path);
    out.format = "TOML";
  }
  return out;
}

}  // namespace autotune::profiles
