// The one input opener (common/input_file.hpp): what it refuses at once and why, on the opened descriptor,
// and that nothing it opens can make it wait; and message text made fit for one line (common/text.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <variant>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/text.hpp"
#include "support/temp_dir.hpp"

namespace {

using autotune::InputKind;
using autotune::read_file;
using autotune::test::TempDir;
namespace fs = std::filesystem;

constexpr InputKind kSmall{"a test input", 1024};
constexpr InputKind kPiped{"a piped input", 1024, /*pipe_allowed=*/true};
constexpr InputKind kNoLinks{"a planted input", 1024, false, /*follow_links=*/false};

std::string read_refusal(const fs::path& path, const InputKind& kind) {
  try {
    read_file(path, kind);
  } catch (const autotune::InputError& e) {
    CHECK(e.file() == path.string());
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("input files: a regular file within the limit is read whole", "[input_file]") {
  TempDir dir("input");
  const auto f = dir.write("a.txt", "hello\n");
  CHECK(read_file(f, kSmall) == "hello\n");
}

TEST_CASE("input files: directories, FIFOs and devices are refused at once, naming what they are",
          "[input_file]") {
  TempDir dir("input");
  CHECK(read_refusal(dir.path(), kSmall) == "expected a test input (a regular file); found a directory");
  const auto fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No writer ever comes: a blocking open would wait here forever.
  CHECK(read_refusal(fifo, kSmall) == "expected a test input (a regular file); found a FIFO (named pipe)");
  CHECK(read_refusal("/dev/zero", kSmall) ==
        "expected a test input (a regular file); found a character device");
  CHECK(read_refusal(dir / "missing", kSmall) == "cannot read: No such file or directory");
}

TEST_CASE("input files: a pipe is read where the kind allows it, and held to the same limit",
          "[input_file]") {
  TempDir dir("input");
  const auto fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opened without a writer: the read sees the end at once instead of waiting.
  CHECK(read_file(fifo, kPiped).empty());
  CHECK(read_refusal("/dev/zero", kPiped) ==
        "expected a piped input (a regular file or a pipe); found a character device");
}

TEST_CASE("input files: over the size limit is refused before reading, in words", "[input_file]") {
  TempDir dir("input");
  const auto big = dir.write("big", "");
  REQUIRE(::truncate(big.c_str(), off_t{3} << 30) == 0);  // sparse: 3 GiB that take no disk
  CHECK(read_refusal(big, kSmall) == "3 GiB is over the 1 KiB limit for a test input");
  const auto edge = dir.write("edge", std::string(1024, 'x'));
  CHECK(read_file(edge, kSmall).size() == 1024);
  const auto over = dir.write("over", std::string(2048, 'x'));
  CHECK(read_refusal(over, kSmall) == "2 KiB is over the 1 KiB limit for a test input");
}

TEST_CASE("input files: a symbolic link is followed unless the kind says not to", "[input_file]") {
  TempDir dir("input");
  const auto target = dir.write("target", "x");
  fs::create_symlink(target, dir / "link");
  CHECK(read_file(dir / "link", kSmall) == "x");
  CHECK(read_refusal(dir / "link", kNoLinks) ==
        "expected a planted input (a regular file); found a symbolic link (not followed)");
}

TEST_CASE("input files: a relative name is opened in the directory given", "[input_file]") {
  TempDir dir("input");
  dir.write("inside", "here");
  autotune::UniqueFd d(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto opened = autotune::open_input("inside", kSmall, d.get());
  REQUIRE(std::holds_alternative<autotune::OpenedInput>(opened));
  std::string text;
  CHECK(autotune::read_input(std::get<autotune::OpenedInput>(opened), kSmall, text).empty());
  CHECK(text == "here");
}

TEST_CASE("printable: control bytes escaped, long text cut", "[text]") {
  using autotune::printable;
  CHECK(printable("plain") == "plain");
  CHECK(printable(std::string("a\nb\0c", 5)) == "a\\x0ab\\x00c");
  CHECK(printable("\xff") == "\\xff");
  const std::string huge(10 << 20, 'k');
  CHECK(printable(huge) == std::string(80, 'k') + "...");
  CHECK(printable(huge, 3) == "kkk...");
}
