#include <catch2/catch.hpp>
#include <filesystem>

#include "common/install_paths.hpp"
#include "support/temp_dir.hpp"

using autotune::test::TempDir;

namespace fs = std::filesystem;

TEST_CASE("the plugin is found in the build tree layout", "[plugin_path]") {
  TempDir dir;
  fs::path exe = dir.write("build/cli/nccl-autotune", "");
  fs::path lib = dir.write("build/plugins/libnccl-tuner-autotune.so", "");
  CHECK(autotune::find_plugin({exe, std::nullopt}) == lib);
}

TEST_CASE("the plugin is found in an installed prefix, through a symbolic link to the binary",
          "[plugin_path]") {
  TempDir dir;
  fs::path exe = dir.write("prefix/bin/nccl-autotune", "");
  fs::path lib = dir.write(
      std::string("prefix/") + AUTOTUNE_INSTALL_LIBDIR_FOR_TESTS + "/libnccl-tuner-autotune.so", "");
  CHECK(autotune::find_plugin({exe, std::nullopt}) == lib);
  fs::create_directories(dir.path() / "elsewhere/bin");
  fs::create_symlink(exe, dir.path() / "elsewhere/bin/nccl-autotune");
  CHECK(autotune::find_plugin({dir.path() / "elsewhere/bin/nccl-autotune", std::nullopt}) == lib);
}

TEST_CASE("NCCL_AUTOTUNE_PLUGIN_DIR replaces the search", "[plugin_path]") {
  TempDir dir;
  fs::path exe = dir.write("build/cli/nccl-autotune", "");
  dir.write("build/plugins/libnccl-tuner-autotune.so", "");
  fs::path lib = dir.write("custom/libnccl-tuner-autotune.so", "");
  CHECK(autotune::find_plugin({exe, (dir.path() / "custom").string()}) == lib);
  CHECK_THROWS_WITH(autotune::find_plugin({exe, (dir.path() / "none").string()}),
                    Catch::Contains((dir.path() / "none/libnccl-tuner-autotune.so").string()));
}

TEST_CASE("a missing plugin names every place looked at", "[plugin_path]") {
  TempDir dir;
  fs::path exe = dir.write("prefix/bin/nccl-autotune", "");
  try {
    autotune::find_plugin({exe, std::nullopt});
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    for (const auto& c : autotune::plugin_candidates({exe, std::nullopt}))
      CHECK(what.find(c.string()) != std::string::npos);
    CHECK(what.find((dir.path() / "prefix/plugins/libnccl-tuner-autotune.so").string()) != std::string::npos);
    CHECK(what.find("NCCL_AUTOTUNE_PLUGIN_DIR") != std::string::npos);
  }
}

TEST_CASE("this test binary's own location is used by default", "[plugin_path]") {
  auto candidates = autotune::plugin_candidates({fs::path(), std::nullopt});
  REQUIRE(!candidates.empty());
  // <build>/tests/launcher/test_launcher -> <build>/tests/plugins/..., never relative.
  for (const auto& c : candidates) CHECK(c.is_absolute());
}
