// A libnccl's version read from the file, without loading it: the real libnccl where one is installed (its
// answer checked against its own ncclGetVersion), and banner-only fixtures of known versions.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "nccl/library_file.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace autotune::nccl;
namespace fs = std::filesystem;

using autotune::test::TempDir;

TEST_CASE("libnccl version: from the file's real name, else from its banner", "[library_file]") {
  CHECK(version_from_file_name("libnccl.so.2.28.9") == Version{2, 28, 9});
  CHECK_FALSE(version_from_file_name("libnccl.so.2"));
  CHECK_FALSE(version_from_file_name("libnccl.so.2.28"));
  CHECK_FALSE(version_from_file_name("libnccl-net.so.2.28.9"));
  CHECK(version_from_banner("2.28.9+cuda13.0") == Version{2, 28, 9});
  CHECK(version_from_banner("2.19.3 compiled with CUDA 12.2") == Version{2, 19, 3});
  CHECK_FALSE(version_from_banner("mismatch with remote peer"));

  std::string why;
  CHECK(library_file_version(AUTOTUNE_BANNER_NCCL_2_27, &why) == Version{2, 27, 3});
  CHECK(library_file_version(AUTOTUNE_BANNER_NCCL_2_28, &why) == Version{2, 28, 9});
}

TEST_CASE("libnccl version: a link to a versioned file names it", "[library_file]") {
  const TempDir tmp("library-file");
  const std::filesystem::path dir = tmp.path();
  fs::copy_file(AUTOTUNE_BANNER_NCCL_2_27, dir / "libnccl.so.2.26.5", fs::copy_options::overwrite_existing);
  fs::remove(dir / "libnccl.so.2");
  fs::create_symlink("libnccl.so.2.26.5", dir / "libnccl.so.2");
  std::string why;
  CHECK(library_file_version(dir / "libnccl.so.2", &why) == Version{2, 26, 5});  // the name wins: no read
  fs::remove_all(dir);
}

TEST_CASE("libnccl version: what is not a libnccl says what it is", "[library_file]") {
  const TempDir tmp("library-file-bad");
  const std::filesystem::path dir = tmp.path();
  std::ofstream(dir / "text.so") << "not an ELF file at all";
  std::string why;
  CHECK_FALSE(library_file_version(dir / "text.so", &why));
  CHECK(why == (dir / "text.so").string() + " is not a 64-bit ELF library");
  CHECK_FALSE(library_file_version(dir / "missing.so", &why));
  CHECK(why.find("missing.so: No such file") != std::string::npos);
  CHECK_FALSE(library_file_version("/proc/self/exe", &why));  // an ELF file, but no banner
  CHECK(why.find("carries no \"NCCL version \" banner: not a libnccl") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("libnccl version: the installed libnccl's file agrees with its ncclGetVersion", "[library_file]") {
#ifndef AUTOTUNE_REAL_LIBNCCL
  AUTOTUNE_SKIP("no libnccl was found at configure time");
#else
  std::string why;
  auto from_file = library_file_version(AUTOTUNE_REAL_LIBNCCL, &why);
  INFO(why);
  REQUIRE(from_file);
  auto loaded = runtime_version(AUTOTUNE_REAL_LIBNCCL, &why);
  if (!loaded) AUTOTUNE_SKIP("the installed libnccl cannot be loaded here: " << why);
  CHECK(*from_file == *loaded);
#endif
}
