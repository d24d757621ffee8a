// One run at a time (common/run_lock.hpp): a second process is refused at once, naming the holder; a holder
// killed with SIGKILL leaves a lock the next run takes over; and `tune` refuses while another calibration of
// the same store and name holds its journal's lock.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/input_error.hpp"
#include "common/run_lock.hpp"
#include "kill_loop.hpp"

namespace {

using autotune::InputError;
using autotune::RunLock;
using autotune::test::TempDir;

// A child process that takes the lock, says so through a pipe, and holds it until killed.
pid_t hold_in_child(const std::filesystem::path& lock) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    try {
      RunLock held = RunLock::acquire(lock, "the test's holder");
      char ok = 'y';
      [[maybe_unused]] ssize_t n = ::write(ready[1], &ok, 1);
      for (;;) ::pause();
    } catch (...) {
    }
    ::_exit(3);
  }
  ::close(ready[1]);
  char got = 0;
  REQUIRE(::read(ready[0], &got, 1) == 1);
  ::close(ready[0]);
  return child;
}

void kill_and_reap(pid_t child) {
  ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
}

}  // namespace

TEST_CASE("run lock: a second process is refused at once, naming host, pid and since when", "[lock]") {
  TempDir dir("run-lock");
  const auto lock = dir.path() / "x.lock";
  const pid_t child = hold_in_child(lock);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    RunLock second = RunLock::acquire(lock, "the second");
    kill_and_reap(child);
    FAIL("the second process took a lock the first holds");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("found the test's holder (host ") != std::string::npos);
    CHECK(what.find("pid " + std::to_string(child)) != std::string::npos);
    CHECK(what.find("since 20") != std::string::npos);
    CHECK(what.find("host ") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));  // refused, not queued
  kill_and_reap(child);
}

TEST_CASE("run lock: a holder killed with SIGKILL leaves a lock the next run takes over", "[lock]") {
  TempDir dir("run-lock-stale");
  const auto lock = dir.path() / "x.lock";
  const pid_t child = hold_in_child(lock);
  kill_and_reap(child);
  CHECK(autotune::lock_holder(lock).find("pid " + std::to_string(child)) != std::string::npos);
  RunLock mine = RunLock::acquire(lock, "the next run");
  CHECK(autotune::lock_holder(lock).find("pid " + std::to_string(::getpid())) != std::string::npos);
  // Held by this process now: another process is refused until it is released.
  const pid_t other = ::fork();
  REQUIRE(other >= 0);
  if (other == 0) {
    try {
      RunLock again = RunLock::acquire(lock, "a third");
      ::_exit(0);
    } catch (const InputError&) {
      ::_exit(7);
    }
  }
  int status = 0;
  while (::waitpid(other, &status, 0) < 0) {
  }
  CHECK(WEXITSTATUS(status) == 7);
}

TEST_CASE("run lock: a symbolic link or a FIFO as the lock file is refused, not followed or waited on",
          "[lock]") {
  TempDir dir("run-lock-planted");
  std::ofstream(dir.path() / "target") << "keep\n";
  std::filesystem::create_symlink(dir.path() / "target", dir.path() / "link.lock");
  CHECK_THROWS_AS(RunLock::acquire(dir.path() / "link.lock", "x"), InputError);
  REQUIRE(::mkfifo((dir.path() / "fifo.lock").c_str(), 0600) == 0);
  CHECK_THROWS_AS(RunLock::acquire(dir.path() / "fifo.lock", "x"), InputError);
  std::ifstream in(dir.path() / "target");
  std::string kept;
  std::getline(in, kept);
  CHECK(kept == "keep");
}
