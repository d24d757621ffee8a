// PLACEHOLDER: replaced by the module that implements 'env'. Must not survive into a finished issue.
#include <cstdio>

#include "cli/commands.hpp"
#include "common/input_error.hpp"

namespace autotune::cli {
int cmd_env(const Args&) {
  std::fprintf(stderr, "nccl-autotune: 'env' is not built yet\n");
  return kExitFailed;
}
}  // namespace autotune::cli
