#pragma once
// nccl-autotune check as a library function: every node's health (its probe's findings), then its measured
// baselines (check_plan.hpp's passes through the Runner seam: NCCL on the job's GPUs, or the simulator),
// compared with the median of the nodes and with what the probe says the hardware can do
// (baseline_findings.hpp), and whether the nodes agree on the fabric settings. Under mpirun/srun every
// process calls run_check with the same context (the runners' calls are collective) and gets the same
// report. Not thread-safe; progress is reported through a callback on the calling thread.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "check/baseline_findings.hpp"
#include "check/baselines.hpp"
#include "check/check_plan.hpp"
#include "check/cluster_health.hpp"
#include "common/clock.hpp"
#include "runners/runner.hpp"
#include "topology/health.hpp"
#include "topology/model.hpp"

namespace autotune::check {

// One node of the job as its own probe saw it.
struct NodeRecord {
  std::string host;  // empty for a simulated node
  topology::Topology topology;
};

struct CheckOptions {
  uint64_t bytes = 256ull << 20;  // the all-reduce size of every pass: large enough to measure bandwidth
  int repetitions = 5;
  Thresholds thresholds;
  bool measure = true;          // false: health only (--health-only)
  double watchdog_scale = 1.0;  // multiplies the NCCL runner's hang bound (--watchdog-scale)
};

// What check runs on: the nodes, and the seam that makes each pass's runner (every group at once).
struct CheckContext {
  std::vector<NodeRecord> nodes;  // in the job's node order
  int gpus_per_node = 0;          // ranks per node of the job
  std::string source;             // "simulated" or "measured"
  std::function<std::unique_ptr<runners::Runner>(const Pass&)> make_runner;
  const Clock* clock = nullptr;  // null = the steady clock
};

struct CheckProgress {
  int done = 0;
  int total = 0;
  std::string pass;  // the one that just finished
  double elapsed_s = 0.0;
  double remaining_s = -1.0;  // negative = unknown
};
using CheckProgressFn = std::function<void(const CheckProgress&)>;

struct NodeReport {
  topology::NodeHealth health;  // the probe's findings, then the measurements'
  NodeBaselines baselines;
  HardwareFigures hardware;
  std::map<std::string, std::string> fabric_env;  // what its probe chose (topology/fabric_setup.hpp)
};

struct CheckReport {
  std::string source;  // "simulated", "measured", or the runner's own ("standin")
  std::string runner;  // the first pass's runner, in one line
  int gpus_per_node = 0;
  uint64_t bytes = 0;
  bool measured = false;  // the passes ran (not --health-only)
  std::vector<PassResult> passes;
  Baselines baselines;
  std::vector<NodeReport> nodes;
  std::map<std::string, std::string> fabric_env;  // the settings every node agrees on
  // `check --journal`: the calibration journal the findings come from and how many groups of its shapes
  // measured several at once it judged (calibrate/journal_check.hpp); empty and 0 otherwise.
  std::string journal;
  int journal_groups = 0;
  bool blocks() const;              // some node may not be calibrated on
  std::string_view status() const;  // "ok", "warn" or "block": the worst node's
};

// Throws InputError for a context that cannot work (no nodes, a node whose GPU count differs from
// gpus_per_node), and what the runner seam throws when a runner cannot start.
CheckReport run_check(const CheckOptions& options, const CheckContext& context,
                      const CheckProgressFn& progress = {});

// The report as tune's health gate takes it.
check::ClusterHealth cluster_health(const CheckReport& report);

}  // namespace autotune::check
