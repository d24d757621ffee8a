#pragma once
// From what `tune` was asked to a calibration ready to run: which node and cluster, whether this process
// measures, orchestrates one job per process-wide setting or is one job's worker, the search space (scales,
// the process-wide settings the probe suggests or the user names, the algorithms the node can run), the
// provenance, where the journal goes, and the runner each job gets. The CLI parses options into a
// CalibrationRequest and prints results; everything between is here. The world comes in through
// CalibrationContext so that tests can stand in for it. Not thread-safe.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/orchestrator.hpp"
#include "calibrate/previous_shapes.hpp"
#include "calibrate/shape_plan.hpp"
#include "calibrate/shapes.hpp"
#include "calibrate/tune.hpp"
#include "check/cluster_health.hpp"
#include "measure/runner_factory.hpp"
#include "nccl/vocabulary.hpp"
#include "runners/process_group.hpp"
#include "simulator/sim_spec.hpp"

namespace autotune::calibrate {

// Every value already parsed; empty or unset means "the default".
struct CalibrationRequest {
  // What measures: the labelled simulator (with a node and a node count), or the GPUs this job runs on.
  bool simulate = false;
  sim::SimulatorSpec simulator;  // its node, nodes, seed, noise and faults; left at its defaults on GPUs
  // What to sweep.
  std::vector<nccl::Collective> collectives;  // empty: all five
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 8ull << 30;
  std::vector<int> channels;
  // Which communicators: shapes named, or the ones a parallel layout creates, or whole nodes at node counts
  // (nullopt = all of them); none of the three = the default shapes (calibrate/shapes.hpp).
  std::vector<ShapeRequest> shapes;  // each with its operations (empty: the collectives asked for)
  std::optional<ParallelLayout> parallelism;
  std::vector<std::optional<int>> scales;
  std::optional<std::vector<std::string>> ib_hca;     // NCCL_IB_HCA values; nullopt = the probe's
  std::optional<std::vector<std::string>> cross_nic;  // NCCL_CROSS_NIC values; nullopt = the probe's
  // Point-to-point settings, one job each, where the layout or shapes send/recv or all-to-all across nodes
  // (calibrate/p2p_candidates.hpp); nullopt = the default candidates, empty = none (--p2p-env none).
  std::optional<std::vector<std::map<std::string, std::string>>> p2p_env;
  // The health gate (check/cluster_health.hpp).
  bool ignore_health = false;
  bool exclude_unhealthy = false;
  uint64_t check_bytes = 256ull << 20;  // check's all-reduce size (--check-bytes)
  bool add_shapes = false;              // keep the current version's rules of shapes not measured now
  std::vector<int>
      excluded_nodes;  // a worker of a simulated calibration: the nodes its orchestrator left out
  // How.
  std::string strategy = "adaptive";
  int repetitions = 5;
  double watchdog_scale = 1.0;  // multiplies the runner's hang bound
  double min_gain = 0.03;
  PredictOptions predict;  // --predict: large scales from the cost model, confirmed (scale_prediction.hpp)
  std::optional<std::chrono::duration<double>> budget;
  bool resume = false;
  std::string name;      // the cluster's name in the store; empty = derived
  std::string command;   // the command line, for provenance
  std::string launcher;  // how jobs start ("srun -N 2 ..."); empty = chosen
  bool dry_run = false;  // only plan: on GPUs nothing is started to learn the cluster
  // A dry run on GPUs (calibrate/plan_world.hpp): the node count and a recorded node to plan for.
  std::optional<int> plan_nodes;
  std::filesystem::path plan_topology;
  // Set when this process is one job of an orchestrated calibration (`tune --worker`).
  std::optional<int> worker_job;
  std::filesystem::path journal_part;
  // A worker of one concurrent group (calibrate/group_jobs.hpp): the only scale it measures, and the
  // allocation's nodes it runs on ("512-767"), journaled with each measurement.
  std::optional<runners::Scale> group_scale;
  std::string group_nodes;
  // Scales smaller than the allocation run side by side on disjoint nodes (calibrate/concurrent_scales.hpp).
  bool concurrent = true;
};

enum class CalibrationMode {
  in_process,    // this process (alone or under mpirun/srun) measures everything it is asked to
  orchestrator,  // one job of worker processes per process-wide setting, started through a launcher
  worker,        // one job of an orchestrated calibration
};

// What the health check before a calibration is given: in process (the simulator, or under mpirun/srun the
// job's processes, every one of which takes part) or, for an orchestrator on GPUs, as a job of its own
// started through the launcher.
struct HealthCheckRequest {
  CalibrationMode mode = CalibrationMode::in_process;
  measure::RunnerOptions runner;  // the simulator's node, nodes, faults, seed and noise; on GPUs the defaults
  Launcher launcher;              // orchestrator: how the check job starts
  std::filesystem::path exe;
  std::filesystem::path work_dir;  // where a check job leaves its result and its output
  const runners::ProcessGroup* processes = nullptr;
  uint64_t bytes = 256ull << 20;  // the all-reduce size of check's passes
};
using HealthCheckFn = std::function<check::ClusterHealth(const HealthCheckRequest&)>;

// What the set-up looks at besides the request.
struct CalibrationContext {
  const runners::ProcessGroup* processes = nullptr;  // the job's processes; null = this process alone
  bool under_mpi = false;                            // started by mpirun/srun itself
  std::map<std::string, std::string> env;            // this process's environment (Slurm's variables)
  std::string hostname;                              // names a cluster measured on GPUs
  std::filesystem::path store;                       // the profile store (where the journal goes)
  std::filesystem::path exe;                         // this program, for the workers
  std::vector<std::string> worker_args;              // the measurement options every worker gets as given
  int nccl_version_code = 0;                         // the NCCL this tool was built with
  std::string tool_version;
  // Makes the runner that measures on GPUs in this process (the seam tests replace).
  std::function<std::unique_ptr<runners::Runner>(const measure::RunnerOptions&)> make_runner =
      measure::make_runner;
  // This node's probe, for a dry run on GPUs (topology::probe_live in the CLI); empty: no GPUs to plan for.
  std::function<topology::Topology()> probe_node;
  // Checks the nodes before anything is measured (nccl-autotune check, wired by the CLI); empty: health is
  // not checked (a context for tests of everything else).
  HealthCheckFn check_health;
};

struct CalibrationSetup {
  CalibrationMode mode = CalibrationMode::in_process;
  TuneOptions tune;
  measure::RunnerOptions runner;      // every job's runner: these, with the job's node count and setting
  Launcher launcher;                  // orchestrator: how each job is started
  OrchestratorOptions orchestration;  // orchestrator
  check::HealthDecision health;       // what the health gate decided
  std::vector<std::string> notes;     // said beside the result
  // What each shape runs and what of it is measured (empty on GPUs before the runner says what it runs on).
  std::vector<ShapePlan> shapes;
  // The plan of the cluster this calibration measures, made once where set-up can tell the cluster (the
  // simulator's, or a dry run's from the probe and the launcher): the orchestrator's header, the rounds run
  // side by side, the dry run's text and the result's planned count all read it. Empty on GPUs otherwise.
  std::optional<TunePlan> plan;
  // The store's current version of the profile this calibration writes (calibrate/previous_shapes.hpp).
  std::optional<PreviousVersion> previous;
  bool add_shapes = false;
  // A worker whose setting cannot change a one-node communicator, after the first job: the first job
  // measures its one-node shapes and the orchestrator counts them for it (runners::reaches_one_node).
  bool one_node_shared = false;
  // On GPUs in process: the runner that named the cluster, handed to the first job.
  std::unique_ptr<runners::Runner> first_runner;
};

// The name a simulated cluster gets without --name: "h100-8x-2n-sim".
std::string simulated_cluster_name(const std::string& stem, int nodes);

// Throws InputError for a request that cannot work (exit status 2), before anything is measured, and for a
// cluster the health gate refuses; std::runtime_error when the GPUs this process should measure cannot be
// used.
CalibrationSetup set_up_calibration(const CalibrationRequest& request, const CalibrationContext& context);

// Runs it: tune() in process or as a worker, orchestrate() as the orchestrator.
TuneResult run_calibration(CalibrationSetup& setup, const ProgressFn& progress = {},
                           const JobNoticeFn& notice = {});

}  // namespace autotune::calibrate
