// Outputs (common/atomic_file.hpp): a file that is not a regular one is never replaced by our rename, and a
// write to standard output that fails fails the command.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "support/temp_dir.hpp"

namespace {

using autotune::write_file_atomically;
using autotune::test::TempDir;
namespace fs = std::filesystem;

std::string write_refusal(const fs::path& target) {
  try {
    write_file_atomically(target, "new");
  } catch (const autotune::InputError& e) {
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("outputs: a FIFO, a symbolic link or a directory is left as it is, with the reason", "[outputs]") {
  TempDir dir("outputs");
  const auto fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(write_refusal(fifo) == "expected a regular file to replace (or none); found a FIFO, left as it is");
  CHECK(fs::is_fifo(fifo));

  const auto target = dir.write("target", "old");
  fs::create_symlink(target, dir / "link");
  CHECK(write_refusal(dir / "link") ==
        "expected a regular file to replace (or none); found a symbolic link, left as it is");
  CHECK(fs::is_symlink(dir / "link"));

  fs::create_directory(dir / "sub");
  CHECK(write_refusal(dir / "sub") ==
        "expected a regular file to replace (or none); found a directory, left as it is");

  // A character device (as root the rename would replace /dev/null itself).
  CHECK(write_refusal("/dev/null") ==
        "expected a regular file to replace (or none); found a device or socket, left as it is");

  // The control: a regular file, or none, is written.
  write_file_atomically(target, "new");
  write_file_atomically(dir / "fresh", "new");
  CHECK(fs::file_size(target) == 3);
  CHECK(fs::file_size(dir / "fresh") == 3);
}

TEST_CASE("outputs: a write to standard output that fails is an error, not success", "[outputs]") {
  // In a child: its standard output is /dev/full, where every write fails with ENOSPC.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int full = ::open("/dev/full", O_WRONLY);
    if (full < 0 || ::dup2(full, 1) < 0) ::_exit(3);
    std::cout << "a line nobody will read\n";
    std::printf("another\n");
    try {
      autotune::finish_standard_output();
    } catch (const std::runtime_error& e) {
      const std::string said = e.what();
      ::_exit(said == "cannot write to standard output: No space left on device" ? 0 : 4);
    }
    ::_exit(5);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
