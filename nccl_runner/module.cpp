// The NCCL runner module's one export (runners/modules.hpp): libnccl-autotune-runner.so, loaded by
// nccl-autotune only when it measures on GPUs.
#include "nccl_runner/nccl_runner.hpp"
#include "runners/modules.hpp"

extern "C" __attribute__((visibility("default"))) const autotune::runners::NcclRunnerModule*
nccl_autotune_runner_module() {
  static const autotune::runners::NcclRunnerModule table{
      autotune::runners::kModuleAbi,
      [](const autotune::runners::MeasureOptions& options,
         const autotune::runners::ProcessGroup& processes) -> std::unique_ptr<autotune::runners::Runner> {
        return std::make_unique<autotune::nccl_runner::NcclRunner>(options, processes);
      }};
  return &table;
}
