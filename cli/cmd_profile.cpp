// PLACEHOLDER: replaced by the module that implements 'profile'. Must not survive into a finished issue.
#include <cstdio>

#include "cli/commands.hpp"
#include "common/input_error.hpp"

namespace autotune::cli {
int cmd_profile(const Args&) {
  std::fprintf(stderr, "nccl-autotune: 'profile' is not built yet\n");
  return kExitFailed;
}
}  // namespace autotune::cli
