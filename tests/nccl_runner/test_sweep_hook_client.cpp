#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "nccl_runner/sweep_hook_client.hpp"

using namespace autotune::nccl_runner;

TEST_CASE("The sweep hook client loads the built plugin and points NCCL at the same file", "[hook]") {
  setenv("NCCL_AUTOTUNE_PROFILE", "/nonexistent/profile.toml", 1);
  setenv("NCCL_TUNER_CONFIG_FILE", "/nonexistent/rules.csv", 1);
  SweepHookClient hook(AUTOTUNE_TEST_PLUGIN_PATH);
  INFO(hook.problem());
  REQUIRE(hook.usable());
  CHECK(hook.path() == AUTOTUNE_TEST_PLUGIN_PATH);
  const char* env = std::getenv("NCCL_TUNER_PLUGIN");
  REQUIRE(env != nullptr);
  CHECK(std::string(env) == hook.path());
  // "Nothing forced" must be NCCL's own choice, not a profile's.
  CHECK(std::getenv("NCCL_AUTOTUNE_PROFILE") == nullptr);
  CHECK(std::getenv("NCCL_TUNER_CONFIG_FILE") == nullptr);

  CHECK(hook.force(1, 2, 4));  // ring/simple, 4 channels
  auto seen = hook.last();
  REQUIRE(seen);
  CHECK(seen->calls == 0);           // force() resets what the plugin saw
  CHECK_FALSE(hook.force(9, 2, 0));  // out of range: the hook refuses
  CHECK(hook.force(-1, -1, 0));
}

TEST_CASE("A missing plugin leaves the hook unusable with the reason", "[hook]") {
  SweepHookClient hook("/nonexistent/libnccl-tuner-autotune.so");
  CHECK_FALSE(hook.usable());
  CHECK(hook.problem() == "tuner plugin /nonexistent/libnccl-tuner-autotune.so does not exist");
  CHECK_FALSE(hook.force(-1, -1, 0));
  CHECK_FALSE(hook.last());
}

TEST_CASE("A library without the hook is refused", "[hook]") {
  SweepHookClient hook("/lib/x86_64-linux-gnu/libm.so.6");
  CHECK_FALSE(hook.usable());
  CHECK(hook.problem().find("has no sweep hook") != std::string::npos);
}
