#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "profiles/file_trust.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using autotune::test::TempDir;

namespace fs = std::filesystem;
using autotune::profiles::untrusted_reason;

TEST_CASE("a private file in a private directory is trusted", "[file_trust]") {
  TempDir dir;
  fs::path f = dir.write("p.toml", "x");
  ::chmod(f.c_str(), 0644);
  CHECK(untrusted_reason(f) == std::nullopt);
  CHECK(untrusted_reason(dir.path()) == std::nullopt);
}

TEST_CASE("group- or world-writable files and directories are refused", "[file_trust]") {
  TempDir dir;
  fs::path f = dir.write("p.toml", "x");
  ::chmod(f.c_str(), 0664);
  auto why = untrusted_reason(f);
  REQUIRE(why);
  CHECK(*why == f.string() + " is writable by its group (mode 0664)");
  ::chmod(f.c_str(), 0646);
  REQUIRE(untrusted_reason(f));
  CHECK(untrusted_reason(f)->find("writable by everyone (mode 0646)") != std::string::npos);
  ::chmod(f.c_str(), 0644);
  ::chmod(dir.path().c_str(), 0777);
  why = untrusted_reason(f);
  REQUIRE(why);
  CHECK(*why == dir.path().string() + " is writable by everyone (mode 0777)");
  // The sticky bit (as on /tmp) stops others renaming or removing our entries: the directory is fine.
  ::chmod(dir.path().c_str(), 01777);
  CHECK(untrusted_reason(f) == std::nullopt);
  // ... but a sticky directory given as the store itself is still writable by everyone.
  CHECK(untrusted_reason(dir.path()));
}

TEST_CASE("owners other than root, you or the file's owner are refused", "[file_trust]") {
  if (::geteuid() != 0) {
    AUTOTUNE_SKIP("not root: cannot chown to test foreign owners");
  }
  TempDir dir;
  fs::path sub = dir.path() / "store";
  fs::create_directory(sub);
  fs::path f = sub / "p.toml";
  std::ofstream(f) << "x";
  // A file owned by someone else (the admin who calibrated) in directories only root and they control.
  REQUIRE(::chown(f.c_str(), 4242, 4242) == 0);
  CHECK(untrusted_reason(f) == std::nullopt);
  REQUIRE(::chown(sub.c_str(), 4242, 4242) == 0);
  CHECK(untrusted_reason(f) == std::nullopt);
  // A third user owning a directory on the way could swap the file.
  REQUIRE(::chown(f.c_str(), 0, 0) == 0);
  auto why = untrusted_reason(f);
  REQUIRE(why);
  CHECK(why->find(sub.string() + " is owned by uid 4242") == 0);
}

TEST_CASE("symbolic links are followed and their targets checked", "[file_trust]") {
  TempDir dir;
  fs::path target_dir = dir.path() / "open";
  fs::create_directory(target_dir);
  fs::path f = target_dir / "p.toml";
  std::ofstream(f) << "x";
  ::chmod(f.c_str(), 0644);
  fs::path link = dir.path() / "link.toml";
  fs::create_symlink(f, link);
  CHECK(untrusted_reason(link) == std::nullopt);
  ::chmod(target_dir.c_str(), 0777);
  auto why = untrusted_reason(link);
  REQUIRE(why);
  CHECK(why->find(target_dir.string() + " is writable by everyone") == 0);
}

TEST_CASE("a missing file is reported", "[file_trust]") {
  TempDir dir;
  auto why = untrusted_reason(dir.path() / "absent.toml");
  REQUIRE(why);
  CHECK(why->find("cannot be examined") != std::string::npos);
}

TEST_CASE("dir/link/../file is judged where open() goes, not where the path reads lexically",
          "[file_trust]") {
  // trusted/link -> open/sub, so trusted/link/../p.toml is open/p.toml; lexically it reads trusted/p.toml,
  // a decoy that would pass.
  TempDir dir;
  const fs::path trusted = dir.path() / "trusted", open = dir.path() / "open";
  fs::create_directories(trusted);
  fs::create_directories(open / "sub");
  std::ofstream(trusted / "p.toml") << "decoy";
  std::ofstream(open / "p.toml") << "planted";
  ::chmod((trusted / "p.toml").c_str(), 0644);
  ::chmod((open / "p.toml").c_str(), 0644);
  ::chmod(open.c_str(), 0777);
  fs::create_directory_symlink(open / "sub", trusted / "link");
  CHECK(untrusted_reason(trusted / "p.toml") == std::nullopt);  // the control: the decoy itself passes
  auto why = untrusted_reason(trusted / "link/../p.toml");
  REQUIRE(why);
  CHECK(why->find("is writable by everyone (mode 0777)") != std::string::npos);
}

TEST_CASE("the file checked must be the file the caller opened", "[file_trust]") {
  TempDir dir;
  const fs::path a = dir.path() / "a.toml", b = dir.path() / "b.toml";
  std::ofstream(a) << "a";
  std::ofstream(b) << "b";
  ::chmod(a.c_str(), 0644);
  ::chmod(b.c_str(), 0644);
  struct stat opened {};
  REQUIRE(::stat(b.c_str(), &opened) == 0);
  auto why = untrusted_reason(a, &opened);
  REQUIRE(why);
  CHECK(why->find("changed while it was being checked") != std::string::npos);
  REQUIRE(::stat(a.c_str(), &opened) == 0);
  CHECK(untrusted_reason(a, &opened) == std::nullopt);
}
