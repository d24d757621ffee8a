#include <sys/stat.h>
#include <unistd.h>

#include <sys/wait.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "launcher/fingerprint_cache.hpp"
#include "support/temp_dir.hpp"

using autotune::test::TempDir;

namespace fs = std::filesystem;
using autotune::launcher::FingerprintCache;

TEST_CASE("the fingerprint is probed once per boot and key", "[fingerprint_cache]") {
  TempDir dir;
  fs::path boot = dir.write("boot_id", "boot-1\n");
  FingerprintCache cache(dir.path() / "cache", boot);
  int probes = 0;
  auto probe = [&] {
    ++probes;
    return std::string("fp-") + std::to_string(probes);
  };
  auto first = cache.get("nccl=22809", probe);
  CHECK(first.fingerprint == "fp-1");
  CHECK_FALSE(first.from_cache);
  CHECK(first.note.empty());
  auto second = cache.get("nccl=22809", probe);
  CHECK(second.fingerprint == "fp-1");
  CHECK(second.from_cache);
  CHECK(probes == 1);
  // The cache directory is private.
  struct stat st {};
  REQUIRE(::stat(cache.dir().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  SECTION("another key probes again") {
    CHECK(cache.get("nccl=22905", probe).fingerprint == "fp-2");
  }
  SECTION("a reboot invalidates the entry") {
    std::ofstream(boot) << "boot-2\n";
    CHECK(cache.get("nccl=22809", probe).fingerprint == "fp-2");
    CHECK(cache.get("nccl=22809", probe).from_cache);
  }
  SECTION("an entry others can write is ignored") {
    ::chmod(cache.file().c_str(), 0666);
    CHECK_FALSE(cache.peek("nccl=22809"));
  }
  SECTION("a garbled entry is ignored") {
    std::ofstream(cache.file()) << "nonsense\n";
    CHECK(cache.get("nccl=22809", probe).fingerprint == "fp-2");
  }
}

TEST_CASE("a cache directory that is not the user's own is not used", "[fingerprint_cache]") {
  TempDir dir;
  fs::path boot = dir.write("boot_id", "boot-1\n");
  fs::path shared = dir.path() / "shared";
  fs::create_directory(shared);
  ::chmod(shared.c_str(), 0777);
  FingerprintCache cache(shared, boot);
  int probes = 0;
  auto probe = [&] { return "fp-" + std::to_string(++probes); };
  auto r = cache.get("k", probe);
  CHECK(r.fingerprint == "fp-1");
  CHECK(r.note.find("writable by others") != std::string::npos);
  CHECK(cache.get("k", probe).fingerprint == "fp-2");
  CHECK_FALSE(fs::exists(cache.file()));
  CHECK_THROWS(cache.put("k", "fp"));
}

TEST_CASE("a failing probe stores nothing", "[fingerprint_cache]") {
  TempDir dir;
  FingerprintCache cache(dir.path() / "cache", dir.write("boot_id", "b\n"));
  CHECK_THROWS_WITH(cache.get("k", []() -> std::string { throw std::runtime_error("no hwloc"); }),
                    "no hwloc");
  CHECK_FALSE(cache.peek("k"));
}

TEST_CASE("the default directory honours NCCL_AUTOTUNE_CACHE_DIR, then XDG_RUNTIME_DIR",
          "[fingerprint_cache]") {
  ::setenv("NCCL_AUTOTUNE_CACHE_DIR", "/x/cache", 1);
  CHECK(FingerprintCache::default_dir() == "/x/cache");
  ::unsetenv("NCCL_AUTOTUNE_CACHE_DIR");
  ::setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
  CHECK(FingerprintCache::default_dir() == "/run/user/7/nccl-autotune");
  ::unsetenv("XDG_RUNTIME_DIR");
  CHECK(FingerprintCache::default_dir() == "/tmp/nccl-autotune-" + std::to_string(::geteuid()));
}

TEST_CASE("ranks starting together probe once", "[fingerprint_cache]") {
  TempDir dir;
  fs::path boot = dir.write("boot_id", "boot-1\n");
  fs::path counter = dir.path() / "probes";
  constexpr int kRanks = 8;
  std::vector<pid_t> children;
  for (int i = 0; i < kRanks; ++i) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      FingerprintCache cache(dir.path() / "cache", boot);
      auto r = cache.get("k", [&] {
        std::ofstream(counter, std::ios::app) << "x";
        ::usleep(50000);  // a slow probe: the others must wait for it, not repeat it
        return std::string("fp");
      });
      ::_exit(r.fingerprint == "fp" ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(fs::file_size(counter) == 1);
}
