#pragma once
// Starting, watching and stopping child processes: the seam between the orchestrator (one job of worker
// processes per process-wide setting) and the operating system, so that tests can assert what was started
// and script how it ends without forking anything. While a PosixProcessLauncher exists, SIGINT, SIGTERM and
// SIGHUP sent to this process are forwarded to its running children (a cancelled allocation or Ctrl-C must
// not leave workers behind) and remembered, so that the caller stops starting new ones.
// One launcher per process (it owns those signal handlers); its methods are called from one thread.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.hpp"

namespace autotune {

struct ProcessSpec {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // the whole environment of the child
  std::filesystem::path output;            // stdout and stderr are appended here; stdin is /dev/null
};

// How a child ended: an exit status, or the signal that killed it.
struct ExitStatus {
  std::optional<int> code;
  std::optional<int> signal;
  bool ok() const { return code && *code == 0; }
  std::string describe() const;  // "exit status 3", "killed by signal Terminated"
};

class ChildProcess {
 public:
  virtual ~ChildProcess() = default;
  // nullopt while it runs. Never blocks.
  virtual std::optional<ExitStatus> poll() = 0;
  virtual void send_signal(int signal) = 0;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Throws std::runtime_error when the output file cannot be opened or fork fails; a command that cannot be
  // executed is a child that exits with status 127 after writing why to its output.
  virtual std::unique_ptr<ChildProcess> start(const ProcessSpec& spec) = 0;
  // The first stop signal this process received since the launcher was made; 0 when none.
  virtual int stop_signal() const = 0;
};

// How a child ended, waited for: `stopped` when it was still running at the limit and was stopped.
struct Ended {
  ExitStatus status;
  bool stopped = false;
};
// Polls `child` every 20 ms on `clock` until it ends, calling `tick` (when given) at every poll: the caller
// watches the child's progress meanwhile. With a limit (seconds), a child still running at the limit is
// sent SIGTERM, and SIGKILL 10 s later if it ignores that.
Ended wait_for_end(ChildProcess& child, const Clock& clock, std::optional<double> limit_s,
                   const std::function<void()>& tick = {});

// fork + execvpe, with stop signals forwarded to running children while it lives.
std::unique_ptr<ProcessLauncher> make_posix_launcher();

// This process's environment as a map.
std::map<std::string, std::string> environment_map();

}  // namespace autotune
