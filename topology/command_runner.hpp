#pragma once
// Running an outside program and collecting what it prints: the seam `probe --dcgm` runs `dcgmi` through,
// so that tests replace it with a fake that answers as DCGM does. The real runner starts the program with
// posix_spawnp (found on PATH, never through a shell), reads its stdout and stderr together until it
// exits, and waits for it. Not thread-safe; one command at a time.

#include <memory>
#include <string>
#include <vector>

namespace autotune::topology {

struct CommandOutput {
  bool started = false;
  std::string why;       // when not started: "dcgmi not found on PATH", ...
  int exit_status = -1;  // the exit status, or 128 + the signal that ended it
  std::string output;    // stdout and stderr, interleaved as written
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual CommandOutput run(const std::vector<std::string>& argv) const = 0;
};

std::unique_ptr<CommandRunner> make_command_runner();

}  // namespace autotune::topology
