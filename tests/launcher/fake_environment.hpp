#pragma once
// The launcher's environment seam (EnvLookup) answered from a fixed map, as a job's environment would be.

#include <map>
#include <optional>
#include <string>

#include "launcher/environment.hpp"

namespace autotune::launcher::test {

inline EnvLookup fake_environment(std::map<std::string, std::string> vars = {}) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace autotune::launcher::test
