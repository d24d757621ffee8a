#include "tuner/runner_factory.hpp"

#include <cstdlib>
#include <stdexcept>

#include "common/input_error.hpp"
#include "runners/mpi_context.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_runner.hpp"

#ifdef AUTOTUNE_WITH_NCCL
#include "nccl_runner/nccl_runner.hpp"
#endif

namespace autotune::tuner {

using nccl_runner::NcclRunner;
using runners::MpiContext;
using runners::Runner;
using sim::describe_cluster;
using sim::SimModel;
using sim::SimRunner;

std::unique_ptr<Runner> make_runner(const RunnerOptions& options) {
  if (options.nodes < 1)
    throw InputError("<argument>", 0, "a node count of at least 1, found " + std::to_string(options.nodes));
  if (options.simulate) {
    if (!options.topology)
      throw InputError("<argument>", 0,
                       "a topology for the simulator (a probe file or a bundled example), found none");
    if (!(options.noise >= 0.0 && options.noise < 1.0))
      throw InputError("<argument>", 0, "a noise level in [0, 1), found " + std::to_string(options.noise));
    SimModel model(describe_cluster(*options.topology, options.nodes, options.faults), options.process_env,
                   options.deviations);
    return std::make_unique<SimRunner>(std::move(model), options.seed, options.noise, MpiContext::world());
  }
#ifdef AUTOTUNE_WITH_NCCL
  // NCCL read these when this process started; a mismatch means the journal would record the wrong setting.
  for (const auto& [name, value] : options.process_env) {
    const char* actual = std::getenv(name.c_str());
    if (!actual || value != actual)
      throw std::runtime_error("process setting " + name + "=" + value +
                               " must be exported before the job starts (found " +
                               (actual ? std::string(actual) : std::string("unset")) + ")");
  }
  return std::make_unique<NcclRunner>(options, MpiContext::world());
#else
  throw std::runtime_error(
      "this build has no NCCL runner (CUDA runtime or NCCL not found at build time); use --simulate");
#endif
}

}  // namespace autotune::tuner
