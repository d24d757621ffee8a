#include "measure/runner_factory.hpp"

#include <cstdlib>
#include <stdexcept>

#include "common/input_error.hpp"
#include "runners/modules.hpp"
#include "runners/process_group.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_groups.hpp"
#include "simulator/sim_runner.hpp"

namespace autotune::measure {
namespace {

std::unique_ptr<runners::Runner> make_simulator(const RunnerOptions& options) {
  if (!options.topology)
    throw InputError("<argument>", 0,
                     "a topology for the simulator (a probe file or a bundled example), found none");
  if (!(options.noise >= 0.0 && options.noise < 1.0))
    throw InputError("<argument>", 0, "a noise level in [0, 1), found " + std::to_string(options.noise));
  // The whole simulated job, then (for a shape) every group of it at once, each seeing its own nodes and
  // GPUs.
  sim::SimCluster cluster = sim::describe_cluster(*options.topology, options.nodes, options.faults);
  if (!options.shape) {
    sim::SimModel model(std::move(cluster), options.process_env, options.deviations);
    return std::make_unique<sim::SimRunner>(std::move(model), options.seed, options.noise,
                                            runners::job_processes());
  }
  std::vector<sim::SimModel> groups;
  for (auto& c : sim::group_clusters(cluster, *options.shape, options.node_offset, options.local_offset))
    groups.emplace_back(std::move(c), options.process_env, options.deviations);
  return std::make_unique<sim::SimRunner>(std::move(groups), options.seed, options.noise,
                                          runners::job_processes());
}

}  // namespace

std::unique_ptr<runners::Runner> make_runner(const RunnerOptions& options) {
  if (options.nodes < 1)
    throw InputError("<argument>", 0, "a node count of at least 1, found " + std::to_string(options.nodes));
  if (options.simulate) return make_simulator(options);
  // NCCL read these when this process started; a mismatch means the journal would record the wrong setting.
  for (const auto& [name, value] : options.process_env) {
    const char* actual = std::getenv(name.c_str());
    if (!actual || value != actual)
      throw std::runtime_error("process setting " + name + "=" + value +
                               " must be exported before the job starts (found " +
                               (actual ? std::string(actual) : std::string("unset")) + ")");
  }
  const runners::NcclRunnerModule* module = nullptr;
  try {
    module = &runners::load_nccl_runner_module();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot measure on GPUs: ") + e.what() +
                             " (a build without CUDA and NCCL has no NCCL runner; use --simulate)");
  }
  return module->make_runner(options, runners::job_processes());
}

}  // namespace autotune::measure
