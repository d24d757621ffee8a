// PLACEHOLDER: replaced by the module that implements 'run'. Must not survive into a finished issue.
#include <cstdio>

#include "cli/commands.hpp"
#include "common/input_error.hpp"

namespace autotune::cli {
int cmd_run(const Args&) {
  std::fprintf(stderr, "nccl-autotune: 'run' is not built yet\n");
  return kExitFailed;
}
}  // namespace autotune::cli
