// PLACEHOLDER: replaced by the module that implements 'import_nccl_tests'. Must not survive into a finished issue.
#include <cstdio>

#include "cli/commands.hpp"
#include "common/input_error.hpp"

namespace autotune::cli {
int cmd_import_nccl_tests(const Args&) {
  std::fprintf(stderr, "nccl-autotune: 'import_nccl_tests' is not built yet\n");
  return kExitFailed;
}
}  // namespace autotune::cli
