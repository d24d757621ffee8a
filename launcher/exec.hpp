#pragma once
// Becoming the job: execvp in this very process, so the job keeps our pid, its parent (mpirun, srun,
// torchrun, a container runtime) sees its signals and exit status directly, and stdin/stdout are untouched.

#include <string>
#include <utility>
#include <vector>

namespace autotune::launcher {

struct ExecFailure {
  int exit_status = 127;  // as a shell reports it: 127 command not found, 126 found but not executable
  std::string message;
};

// Runs argv[0] (searched in PATH when it has no '/') with the current environment plus `set` (NAME, value;
// replacing any current value). Returns only when the exec failed.
ExecFailure exec_command(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& set);

}  // namespace autotune::launcher
