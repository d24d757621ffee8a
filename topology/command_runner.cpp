#include "topology/command_runner.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace autotune::topology {
namespace {

class SpawnRunner : public CommandRunner {
 public:
  CommandOutput run(const std::vector<std::string>& argv) const override {
    CommandOutput out;
    if (argv.empty()) {
      out.why = "no command";
      return out;
    }
    int fds[2];
    if (::pipe(fds) != 0) {
      out.why = std::string("pipe: ") + std::strerror(errno);
      return out;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (err != 0) {
      ::close(fds[0]);
      out.why = err == ENOENT ? argv[0] + " not found on PATH" : argv[0] + ": " + std::strerror(err);
      return out;
    }
    out.started = true;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
      if (n > 0) {
        out.output.append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return out;
  }
};

}  // namespace

std::unique_ptr<CommandRunner> make_command_runner() {
  return std::make_unique<SpawnRunner>();
}

}  // namespace autotune::topology
