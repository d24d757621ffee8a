#pragma once
// What the end-to-end tests of `nccl-autotune tune` share: the built binary, a private temporary directory,
// the one file of a kind in a store, and "same decisions" between two profiles.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "profiles/profile.hpp"

namespace autotune::test {

inline const std::string kBinary = std::string(AUTOTUNE_BINARY_DIR) + "/cli/nccl-autotune";

// A fresh directory named after the suite, the case and this process.
inline std::filesystem::path fresh_temp_dir(const std::string& suite, const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("autotune-test-" + suite + "-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path only_file(const std::filesystem::path& dir, const std::string& ext) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) return e.path();
  FAIL("no " << ext << " file in " << dir);
  return {};
}

// The same rules (collective, range, algorithm, protocol) in the same order, and the same [env].
inline void check_same_rules(const profiles::Profile& a, const profiles::Profile& b) {
  REQUIRE(a.rules.size() == b.rules.size());
  for (size_t i = 0; i < a.rules.size(); ++i) {
    CHECK(a.rules[i].collective == b.rules[i].collective);
    CHECK(a.rules[i].min_bytes == b.rules[i].min_bytes);
    CHECK(a.rules[i].max_bytes == b.rules[i].max_bytes);
    CHECK(a.rules[i].algorithm == b.rules[i].algorithm);
    CHECK(a.rules[i].protocol == b.rules[i].protocol);
  }
  CHECK(a.env == b.env);
}

}  // namespace autotune::test
