#pragma once
// Shared by the topology tests: where fixtures live, and skipping the recorded machines when absent.

#include <filesystem>
#include <string>
#include "support/skip.hpp"

namespace autotune::topology::test {

inline std::filesystem::path own_fixture(const std::string& name) {
  return std::filesystem::path(AUTOTUNE_SOURCE_DIR) / "tests/topology/fixtures" / name;
}

// The recorded machine, or an empty path (the caller WARNs and returns) when ../shared is not there.
inline std::filesystem::path shared_fixture(const std::string& name) {
  const auto p = std::filesystem::path(AUTOTUNE_SHARED_FIXTURES) / name;
  return std::filesystem::exists(p) ? p : std::filesystem::path();
}

}  // namespace autotune::topology::test

#define AUTOTUNE_SHARED_OR_SKIP(var, name)                                                      \
  const auto var = autotune::topology::test::shared_fixture(name);                              \
  if (var.empty()) {                                                                            \
    AUTOTUNE_SKIP("recorded fixture " << name << " not found under " AUTOTUNE_SHARED_FIXTURES); \
  }
