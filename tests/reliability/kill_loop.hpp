#pragma once
// Kills a writer at random points, over and over: each round forks a child that runs `body` (which writes
// until killed), lets it run for a random time, sends SIGKILL, reaps it, then lets the test check what the
// writer left behind. The delays are spread over the writer's own cycle so that kills land before, inside
// and after its writes and syncs. Single-threaded callers only (fork).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/temp_dir.hpp"

namespace autotune::reliability {

// Forks, runs body() in the child (it must not return normally: it loops until killed; a return or an
// exception exits with status 3 so the test sees it), kills the child after `delay`, and returns whether it
// was still running then (false: it died on its own, which the caller treats as a failure).
inline bool run_and_kill(const std::function<void()>& body, std::chrono::microseconds delay) {
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    try {
      body();
    } catch (...) {
    }
    ::_exit(3);
  }
  std::this_thread::sleep_for(delay);
  ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// How long `body` takes, in microseconds (the mean of `times` runs): kill delays are drawn relative to it, so
// that kills land inside the writer's cycle on a fast disk and on a loaded one alike.
inline int measure_us(const std::function<void()>& body, int times) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < times; ++i) body();
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  return static_cast<int>(us / times) + 1;
}

// The kill loop's budget: `kills` rounds, or fewer when `budget` runs out first (a slow, shared disk makes
// each fsync, and so each kill, slow), but never fewer than `min_kills`.
struct KillBudget {
  int kills = 300;
  int min_kills = 100;
  std::chrono::seconds budget{12};
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool more(int done) const {
    if (done >= kills) return false;
    return done < min_kills || std::chrono::steady_clock::now() - start < budget;
  }
};

// Reproducible random delays: AUTOTUNE_KILL_SEED picks the seed (the test prints the one it used).
inline std::mt19937 kill_rng(unsigned& seed) {
  const char* env = std::getenv("AUTOTUNE_KILL_SEED");
  seed = env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : std::random_device{}();
  return std::mt19937(seed);
}

}  // namespace autotune::reliability
