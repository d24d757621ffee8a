#pragma once
// A rule as JSON, the same in every command's output (tune's summary, profile show and diff, verify): its
// choice, range and scale, its evidence and runner-up (learn), with "gain" meaning what every table means by it (time ratio
// - 1, profiles::gain_of).

#include <nlohmann/json.hpp>

#include "profiles/profile.hpp"

namespace autotune::cli {

nlohmann::json rule_json(const profiles::Rule& rule);

}  // namespace autotune::cli
