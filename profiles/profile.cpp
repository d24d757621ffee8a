#include "profiles/profile.hpp"

#include <array>

namespace autotune::profiles {
namespace {
constexpr std::array<std::string_view, 4> kSourceNames = {"measured", "simulated", "imported", "standin"};
}

std::string_view name(Source s) {
  return kSourceNames[static_cast<int>(s)];
}

std::string_view name(RuleBasis b) {
  return b == RuleBasis::confirmed ? "confirmed" : "predicted";
}

std::optional<RuleBasis> parse_rule_basis(std::string_view text) {
  if (text == "confirmed") return RuleBasis::confirmed;
  if (text == "predicted") return RuleBasis::predicted;
  return std::nullopt;
}

std::optional<Source> parse_source(std::string_view text) {
  for (size_t i = 0; i < kSourceNames.size(); ++i)
    if (text == kSourceNames[i]) return static_cast<Source>(i);
  return std::nullopt;
}

std::optional<double> gain_of(const Rule& rule) {
  if (rule.gain) return rule.gain->gain;
  if (rule.busbw_gbps && rule.default_busbw_gbps && *rule.default_busbw_gbps > 0)
    return *rule.busbw_gbps / *rule.default_busbw_gbps - 1.0;
  return std::nullopt;
}

bool from_model(Source s) {
  return s == Source::simulated || s == Source::standin;
}

std::string_view model_label(Source s) {
  return s == Source::simulated ? "SIMULATED" : s == Source::standin ? "STAND-IN" : "";
}

}  // namespace autotune::profiles
