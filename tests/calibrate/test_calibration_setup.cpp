// The calibration set-up `tune` runs on: what it decides from a request and the world around it (whether it
// measures, orchestrates or is a worker; scales; process-wide settings; names; the journal's place), with
// the runner that would touch GPUs replaced.
#include <catch2/catch.hpp>

#include "calibrate/calibration_setup.hpp"
#include "calibrate/group_launcher.hpp"
#include "calibrate/tune.hpp"
#include "common/input_error.hpp"
#include "profiles/store.hpp"
#include "simulator/sim_fault.hpp"
#include "support/fake_runner.hpp"
#include "support/thread_process_group.hpp"
#include "topology/examples.hpp"

using namespace autotune;
using namespace autotune::search;
using namespace autotune::measure;
using namespace autotune::calibrate;

namespace {

CalibrationContext world(const runners::ProcessGroup* processes = nullptr) {
  CalibrationContext c;
  c.processes = processes;
  c.hostname = "node17";
  c.store = "/store";
  c.exe = "/opt/bin/nccl-autotune";
  c.worker_args = {"--collectives", "allreduce"};
  c.nccl_version_code = 22809;
  c.tool_version = "9.9.9";
  c.make_runner = [](const RunnerOptions&) -> std::unique_ptr<runners::Runner> {
    throw std::logic_error("the set-up must not start a runner here");
  };
  return c;
}

CalibrationRequest simulated(int nodes) {
  CalibrationRequest r;
  r.simulate = true;
  r.simulator.nodes = nodes;
  r.command = "nccl-autotune tune --simulate";
  return r;
}

std::vector<std::string> ids(const std::vector<runners::ProcessSetting>& s) {
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back(x.id);
  return out;
}

}  // namespace

TEST_CASE("set-up: a simulated cluster measures in process, sweeps the probe's settings, names itself") {
  auto s = set_up_calibration(simulated(2), world());
  CHECK(s.mode == CalibrationMode::in_process);
  // The default shapes: one node, one rank per node across both, the whole job.
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{1, 8}, {2, 2}, {2, 16}});
  // The bundled h100-8x node: 8 rail NICs; NCCL's default (all of them) is the default job.
  const auto settings = ids(s.tune.space.settings);
  CHECK(settings.front() == "default");
  CHECK(std::count(settings.begin(), settings.end(), "cross_nic=0") == 1);
  CHECK(std::count(settings.begin(), settings.end(), "cross_nic=1") == 1);
  CHECK(s.tune.header.cluster == "h100-8x-2n-sim");
  CHECK(s.tune.header.source == "simulated");
  CHECK(s.tune.header.nccl_version == "2.28.9");
  CHECK(s.tune.header.tool_version == "9.9.9");
  // What measures and the node's NICs go into the journal's header and from there into the profile.
  CHECK_THAT(s.tune.header.runner, Catch::StartsWith("SIMULATED: NCCL cost model over 2 node(s) x 8"));
  CHECK(s.tune.header.nics_per_node == 8);
  CHECK(s.tune.header.gpus_per_node == 8);
  CHECK_FALSE(s.tune.header.fingerprint.empty());
  CHECK(s.tune.journal == profiles::Store("/store").journal_path_for("h100-8x-2n-sim", "2.28.9"));
  CHECK(s.runner.simulate);
  CHECK(s.runner.max_bytes == 8ull << 30);
}

TEST_CASE("set-up: scales are node counts of the simulated cluster, 'all' included") {
  auto r = simulated(4);
  r.scales = {1, std::nullopt, 2};
  auto s = set_up_calibration(r, world());
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{1, 8}, {4, 32}, {2, 16}});
  r.scales = {5};
  CHECK_THROWS_WITH(set_up_calibration(r, world()),
                    Catch::Contains("--scales: expected node counts from 1 to 4, found 5"));
}

TEST_CASE("set-up: shapes named or made by a parallel layout, each fitted to the cluster") {
  auto r = simulated(4);
  r.shapes = {{{4, 32}, {}}, {{4, 4}, {}}, {{2, 2}, {}}};
  auto s = set_up_calibration(r, world());
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{4, 32}, {4, 4}, {2, 2}});
  CHECK_FALSE(s.tune.header.layout);
  r.shapes = {{{8, 8}, {}}};
  CHECK_THROWS_WITH(set_up_calibration(r, world()), Catch::Contains("--shapes: shape 8x1 needs 8 nodes"));
  r.shapes.clear();
  r.parallelism = parse_parallelism("tp=8,pp=2,dp=2");
  s = set_up_calibration(r, world());
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{1, 8}, {2, 2}});
  CHECK_THAT(s.notes[0], Catch::Contains("tp (tensor parallel): 4 groups of 1x8, measured all at once: "
                                         "allreduce, allgather, reducescatter"));
  CHECK_THAT(s.notes[1], Catch::Contains("dp (data parallel): 16 groups of 2x1"));
  // The pipeline groups' send/recv is measured at NCCL's default beside the data-parallel and embedding
  // groups' collectives on the same shape.
  CHECK_THAT(s.notes[2], Catch::Contains("pp (pipeline parallel): 16 groups of 2x1, measured all at once: "
                                         "sendrecv (point-to-point, NCCL's default at every size"));
  CHECK(s.tune.space.scale_point_to_point.at({2, 2}) ==
        std::vector<nccl::Operation>{nccl::Operation::sendrecv});
  REQUIRE(s.tune.header.layout);
  CHECK(s.tune.header.layout->parallelism == "tp=8,pp=2,dp=2");
  CHECK(s.tune.header.layout->groups.size() == 4);
}

TEST_CASE("set-up: each shape measures the collectives of the kinds it serves, point-to-point listed apart") {
  // The MoE job: 16 nodes x 8, TP 2, EP 8, PP 2, the rest (32) data parallel.
  auto r = simulated(16);
  r.parallelism = parse_parallelism("tp=2,ep=8,pp=2");
  auto s = set_up_calibration(r, world());
  using nccl::Collective;
  const std::vector<Collective> grads = {Collective::allreduce, Collective::reducescatter,
                                         Collective::allgather};
  // The expert groups' shape (2x4) runs all-to-all alone: a scale of its own, no collective swept there.
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{1, 2}, {8, 32}, {2, 8}, {4, 4}, {2, 2}});
  CHECK(s.tune.space.scale_collectives.at({2, 8}).empty());
  CHECK(s.tune.space.scale_point_to_point.at({2, 8}) ==
        std::vector<nccl::Operation>{nccl::Operation::alltoall});
  CHECK(s.tune.space.scale_collectives.at({1, 2}) ==
        std::vector<Collective>{Collective::allreduce, Collective::allgather, Collective::reducescatter});
  CHECK(s.tune.space.scale_collectives.at({8, 32}) == grads);
  CHECK(s.tune.space.scale_collectives.at({4, 4}) == grads);
  CHECK(s.tune.space.scale_collectives.at({2, 2}) == std::vector<Collective>{Collective::allreduce});
  REQUIRE(s.shapes.size() == 5);
  CHECK(s.shapes[2].shape == runners::Scale{2, 8});
  CHECK(s.shapes[2].collectives.empty());
  CHECK(s.shapes[2].point_to_point == std::vector<nccl::Operation>{nccl::Operation::alltoall});
  bool said = false;
  for (const auto& n : s.notes)
    said = said ||
           n == "ep (expert parallel): 16 groups of 2x4, measured all at once: alltoall (point-to-point, "
                "NCCL's default at every size under each process-wide setting; no per-call rule exists)";
  CHECK(said);
  // What is planned is only what the search will measure: fewer than all five collectives everywhere.
  auto all = simulated(16);
  all.shapes = {{{1, 2}, {}}, {{8, 32}, {}}, {{2, 8}, {}}, {{4, 4}, {}}, {{2, 2}, {}}};
  CHECK(plan_tune(s.tune).measurements < plan_tune(set_up_calibration(all, world()).tune).measurements);
  // --collectives narrows every kind's collectives; the point-to-point operations stay.
  r.collectives = {Collective::allreduce};
  s = set_up_calibration(r, world());
  CHECK(s.tune.space.collectives == std::vector<Collective>{Collective::allreduce});
  CHECK(s.tune.space.scales.size() == 5);
}

TEST_CASE("set-up: operations named per shape, and a request with nothing to measure refused") {
  auto r = simulated(4);
  r.shapes = parse_shapes("4x1:alltoall,2x8:allreduce+allgather");
  auto s = set_up_calibration(r, world());
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{4, 4}, {2, 16}});
  CHECK(s.tune.space.collectives ==
        std::vector<nccl::Collective>{nccl::Collective::allgather, nccl::Collective::allreduce});
  CHECK_THAT(s.notes[0], Catch::Contains("shape 4x1: measured all at once: alltoall (point-to-point"));
  CHECK_THAT(s.notes[1], Catch::Contains("shape 2x8: measured all at once: allreduce, allgather"));
  r.shapes = parse_shapes("4x1:alltoall,2x1:sendrecv");
  CHECK_THROWS_WITH(set_up_calibration(r, world()), Catch::Contains("found only point-to-point operations"));
}

TEST_CASE("set-up: requests that cannot work are input errors before anything runs") {
  auto both = simulated(1);
  both.simulator.example = "h100-8x";
  both.simulator.topology_file = "x.xml";
  CHECK_THROWS_AS(set_up_calibration(both, world()), InputError);
  CalibrationRequest gpu_nodes;
  gpu_nodes.simulator.nodes = 2;
  CHECK_THROWS_WITH(set_up_calibration(gpu_nodes, world()), Catch::Contains("add --simulate"));
  auto zero = simulated(0);
  CHECK_THROWS_WITH(set_up_calibration(zero, world()), Catch::Contains("--nodes: expected at least 1"));
  CalibrationContext mpi = world();
  mpi.under_mpi = true;
  auto launcher = simulated(1);
  launcher.launcher = "srun -N 2";
  CHECK_THROWS_WITH(set_up_calibration(launcher, mpi), Catch::Contains("itself started under mpirun/srun"));
  auto worker = simulated(1);
  worker.worker_job = 0;
  CHECK_THROWS_WITH(set_up_calibration(worker, world()), Catch::Contains("--journal-part"));
  worker.journal_part = "/tmp/p.jsonl";
  worker.worker_job = 7;
  CHECK_THROWS_WITH(set_up_calibration(worker, world()),
                    Catch::Contains("--job-id: expected 0 to 0, found 7"));
}

TEST_CASE("set-up: one node sweeps no NIC settings and says so when some were given") {
  auto r = simulated(1);
  r.ib_hca = std::vector<std::string>{"mlx5_0"};
  auto s = set_up_calibration(r, world());
  CHECK(ids(s.tune.space.settings) == std::vector<std::string>{"default"});
  REQUIRE(s.notes.size() == 1);
  CHECK_THAT(s.notes[0], Catch::Contains("one node"));
}

TEST_CASE("set-up: a worker measures its own job's setting into its part") {
  auto r = simulated(2);
  r.cross_nic = std::vector<std::string>{"1"};
  r.ib_hca = std::vector<std::string>{};
  r.worker_job = 1;
  r.journal_part = "/nonexistent/parts/job1.jsonl";
  auto s = set_up_calibration(r, world());
  CHECK(s.mode == CalibrationMode::worker);
  CHECK(ids(s.tune.space.settings) == std::vector<std::string>{"cross_nic=1"});
  CHECK(s.runner.process_env == std::map<std::string, std::string>{{"NCCL_CROSS_NIC", "1"}});
  CHECK(s.tune.journal == "/nonexistent/parts/job1.jsonl");
  CHECK_FALSE(s.tune.resume);
}

TEST_CASE(
    "set-up: on GPUs outside an allocation the orchestrator names the cluster, inside Slurm jobs go through "
    "srun") {
  CalibrationRequest gpus;
  gpus.ib_hca = std::vector<std::string>{"=mlx5_0"};
  auto local = set_up_calibration(gpus, world());
  CHECK(local.mode == CalibrationMode::orchestrator);
  CHECK(local.launcher.words.empty());
  CHECK(local.tune.header.cluster == "node17-1n");
  CHECK(ids(local.orchestration.settings) == std::vector<std::string>{"default", "ib_hca==mlx5_0"});
  CHECK(local.orchestration.exe == "/opt/bin/nccl-autotune");
  CHECK(local.orchestration.measure_args == std::vector<std::string>{"--collectives", "allreduce"});
  CHECK(local.orchestration.header.scales.empty());  // the workers' parts say what was measured

  CalibrationContext slurm = world();
  slurm.env = {{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "2"}, {"SLURM_GPUS_ON_NODE", "8"}};
  auto in_slurm = set_up_calibration(CalibrationRequest{}, slurm);
  CHECK(in_slurm.launcher.words == std::vector<std::string>{"srun", "--ntasks-per-node", "8", "-N", "2"});
  CHECK(in_slurm.tune.header.cluster == "node17-2n");
}

TEST_CASE(
    "set-up: started under mpirun on GPUs, the runner says what the cluster is and serves the first job") {
  runners::SingleProcess alone;
  CalibrationContext mpi = world(&alone);
  mpi.under_mpi = true;
  int made = 0;
  mpi.make_runner = [&](const RunnerOptions& o) -> std::unique_ptr<runners::Runner> {
    ++made;
    CHECK_FALSE(o.simulate);
    return std::make_unique<testing::FakeRunner>(testing::FakeCluster{});
  };
  CalibrationRequest gpus;
  gpus.cross_nic = std::vector<std::string>{"0", "1"};
  auto s = set_up_calibration(gpus, mpi);
  CHECK(made == 1);
  CHECK(s.mode == CalibrationMode::in_process);
  CHECK(ids(s.tune.space.settings) == std::vector<std::string>{"default"});  // NCCL fixed them at start
  CHECK_THAT(s.notes[0], Catch::Contains("not swept (started under mpirun/srun)"));
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{1, 8}});
  CHECK(s.tune.header.gpu_model == "FakeGPU");
  CHECK(s.tune.header.cluster == "node17-1n");
  CHECK(s.first_runner);
  CHECK(s.tune.processes == &alone);
}

TEST_CASE("set-up: every value is checked before anything is set up or measured") {
  auto refused = [](CalibrationRequest r, const std::string& message) {
    INFO(message);
    CHECK_THROWS_WITH(set_up_calibration(r, world()), Catch::Contains(message));
  };
  auto r = simulated(2);
  r.channels = {8, 65};
  refused(r, "--channels: expected channel counts from 1 to 64");
  r = simulated(2);
  r.cross_nic = std::vector<std::string>{"1", "3"};
  refused(r, "--cross-nic: expected values of NCCL_CROSS_NIC, 0, 1 or 2, found '3'");
  r = simulated(2);
  r.ib_hca = std::vector<std::string>{"mlx5_0", " x"};
  refused(r, "--ib-hca: the value ' x'");
  r = simulated(2);
  r.repetitions = 0;
  refused(r, "--reps: expected 1 to 10000");
  r = simulated(2);
  r.simulator.noise = 1.0;
  refused(r, "--noise: expected a relative noise");
  r = simulated(2);
  r.scales = {std::optional<int>(-1)};
  refused(r, "--scales: expected node counts of at least 1");
  r = simulated(2);
  r.strategy = "random";
  refused(r, "--strategy: expected exhaustive or adaptive");
  r = simulated(2);
  r.min_bytes = 0;
  refused(r, "expected 0 < --min-bytes <= --max-bytes");
  // On GPUs too, before a runner is made (world()'s would throw a logic_error).
  CalibrationRequest gpu;
  gpu.channels = {100};
  CHECK_THROWS_AS(set_up_calibration(gpu, world()), autotune::InputError);
}

namespace {

// A check that finds the given nodes blocking (a NIC) and the rest healthy, and records what it was asked.
HealthCheckFn check_finding(int nodes, std::vector<int> blocking,
                            std::vector<HealthCheckRequest>* asked = nullptr,
                            std::map<std::string, std::string> fabric = {}) {
  return [=](const HealthCheckRequest& q) {
    if (asked) asked->push_back(q);
    check::ClusterHealth h;
    h.checked_by = "check (test)";
    h.fabric_env = fabric;
    for (int n = 0; n < nodes; ++n) {
      topology::NodeHealth node{n, "h" + std::to_string(n), {}};
      if (std::find(blocking.begin(), blocking.end(), n) != blocking.end())
        node.findings.push_back({"nic_bandwidth_low", topology::Severity::block, "mlx5_1", "rail 1 at 50%",
                                 "check: test", "mlx5_1 carries 50% of the job's median"});
      h.nodes.push_back(node);
    }
    return h;
  };
}

}  // namespace

TEST_CASE("health: tune refuses a cluster with a blocking node, naming it, before anything is measured") {
  auto c = world();
  std::vector<HealthCheckRequest> asked;
  c.check_health = check_finding(8, {3, 5}, &asked);
  auto r = simulated(8);
  r.simulator.faults = {sim::parse_sim_fault("node=3,nic=1,rate=0.5")};
  try {
    set_up_calibration(r, c);
    FAIL("the set-up went on");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("found 2 blocking: node 3 (h3): mlx5_1: mlx5_1 carries 50%") &&
                   Catch::Contains("| node 5 (h5): mlx5_1:") && Catch::Contains("--exclude-unhealthy") &&
                   Catch::Contains("--ignore-health"));
  }
  // The check saw the simulated job as given: its node, node count and faults.
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].runner.simulate);
  CHECK(asked[0].runner.nodes == 8);
  CHECK(asked[0].runner.faults == r.simulator.faults);
  CHECK(asked[0].runner.topology.has_value());
  // A healthy cluster passes, and the profile will say it was checked.
  c.check_health = check_finding(8, {});
  auto s = set_up_calibration(r, c);
  CHECK(s.tune.header.health == "8 node(s) checked by check (test): none blocks");
  CHECK(s.tune.header.excluded_nodes.empty());
}

TEST_CASE(
    "health: --exclude-unhealthy calibrates the simulator without the blocking nodes, and records them") {
  auto c = world();
  c.check_health = check_finding(8, {3, 5});
  auto r = simulated(8);
  r.simulator.faults = {sim::parse_sim_fault("node=3,nic=1,rate=0.5"),
                        sim::parse_sim_fault("node=6,gpu=1,clock=0.9"),
                        sim::parse_sim_fault("node=5,gpu=2,clock=0.6")};
  r.exclude_unhealthy = true;
  auto s = set_up_calibration(r, c);
  CHECK(s.runner.nodes == 6);
  REQUIRE(s.runner.faults.size() == 1);  // node 6's fault is node 4's now
  CHECK(s.runner.faults[0].node == 4);
  CHECK(s.tune.header.nodes == 6);
  CHECK(s.tune.header.cluster == "h100-8x-6n-sim");
  CHECK(std::find(s.tune.space.scales.begin(), s.tune.space.scales.end(), runners::Scale{6, 48}) !=
        s.tune.space.scales.end());
  CHECK(s.tune.header.excluded_nodes == std::vector<std::string>{"node 3 (h3): mlx5_1 nic_bandwidth_low",
                                                                 "node 5 (h5): mlx5_1 nic_bandwidth_low"});
  CHECK(s.tune.header.health ==
        "8 node(s) checked by check (test): 2 blocking, excluded (--exclude-unhealthy)");
  // Every finding the gate saw goes into the profile's provenance, with its message.
  CHECK(s.tune.header.health_findings ==
        std::vector<std::string>{
            "node 3 (h3): mlx5_1 nic_bandwidth_low (block): mlx5_1 carries 50% of the job's median",
            "node 5 (h5): mlx5_1 nic_bandwidth_low (block): mlx5_1 carries 50% of the job's median"});
  CHECK(build_profile({}, s.tune.header).provenance.health_findings == s.tune.header.health_findings);
  // Orchestrated, the simulated workers are told which nodes to leave out, and leave them out themselves.
  r.launcher = "env";
  auto o = set_up_calibration(r, c);
  const auto& args = o.orchestration.measure_args;
  const auto flag = std::find(args.begin(), args.end(), "--excluded-nodes");
  REQUIRE(flag != args.end());
  CHECK(*(flag + 1) == "3,5");
  auto w = simulated(8);
  w.simulator.faults = r.simulator.faults;
  w.worker_job = 0;
  w.journal_part = "/nonexistent/parts/job0.jsonl";
  w.excluded_nodes = {3, 5};
  auto worker = set_up_calibration(w, c);
  CHECK(worker.runner.nodes == 6);
  CHECK(worker.runner.faults.size() == 1);
  w.excluded_nodes = {3, 9};
  CHECK_THROWS_WITH(set_up_calibration(w, c),
                    Catch::Contains("--excluded-nodes: expected distinct nodes below"));
  // Every node blocking leaves nothing to calibrate.
  c.check_health = check_finding(2, {0, 1});
  auto all = simulated(2);
  all.exclude_unhealthy = true;
  CHECK_THROWS_WITH(set_up_calibration(all, c), Catch::Contains("found every node blocking"));
}

TEST_CASE("health: on GPUs nodes are left out through srun, mpirun and a job already started cannot") {
  CalibrationContext slurm = world();
  slurm.env = {{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "4"}, {"SLURM_GPUS_ON_NODE", "8"}};
  std::vector<HealthCheckRequest> asked;
  slurm.check_health = check_finding(4, {1, 2}, &asked);
  CalibrationRequest gpus;
  gpus.exclude_unhealthy = true;
  auto s = set_up_calibration(gpus, slurm);
  CHECK(asked.at(0).mode == CalibrationMode::orchestrator);
  CHECK(asked.at(0).launcher.words == std::vector<std::string>{"srun", "--ntasks-per-node", "8", "-N", "4"});
  CHECK(asked.at(0).exe == "/opt/bin/nccl-autotune");
  CHECK(s.launcher.words ==
        std::vector<std::string>{"srun", "--exclude=h1,h2", "--ntasks-per-node", "8", "-N", "2"});
  CHECK(s.orchestration.launcher.words == s.launcher.words);
  gpus.launcher = "srun --nodes=4 --ntasks-per-node 8";
  // Without a check (world()'s context) nothing is left out.
  CHECK(set_up_calibration(gpus, world()).launcher.words ==
        std::vector<std::string>{"srun", "--nodes=4", "--ntasks-per-node", "8"});
  auto c = world();
  c.check_health = check_finding(4, {1, 2});
  CHECK(set_up_calibration(gpus, c).launcher.words ==
        std::vector<std::string>{"srun", "--exclude=h1,h2", "--nodes=2", "--ntasks-per-node", "8"});
  gpus.launcher = "mpirun -np 32 -H a:8,b:8,c:8,d:8";
  CHECK_THROWS_WITH(set_up_calibration(gpus, c),
                    Catch::Contains("expected a launcher that can leave nodes out (srun)") &&
                        Catch::Contains("without h1,h2"));
  runners::SingleProcess alone;
  CalibrationContext mpi = world(&alone);
  mpi.under_mpi = true;
  mpi.check_health = check_finding(4, {1});
  CalibrationRequest started;
  started.exclude_unhealthy = true;
  CHECK_THROWS_WITH(set_up_calibration(started, mpi), Catch::Contains("started under mpirun/srun"));
}

TEST_CASE("health: --ignore-health calibrates without checking, and says so, both flags are refused") {
  auto c = world();
  int checks = 0;
  c.check_health = [&](const HealthCheckRequest&) -> check::ClusterHealth {
    ++checks;
    return {};
  };
  auto r = simulated(2);
  r.ignore_health = true;
  auto s = set_up_calibration(r, c);
  CHECK(checks == 0);
  CHECK(s.tune.header.health == "not checked (--ignore-health)");
  CHECK(std::find(s.notes.begin(), s.notes.end(), "health not checked (--ignore-health)") != s.notes.end());
  r.exclude_unhealthy = true;
  CHECK_THROWS_WITH(set_up_calibration(r, c),
                    Catch::Contains("expected one of --ignore-health and --exclude-unhealthy"));
  // The gate itself, given blocking nodes and told to ignore them, goes on and says which.
  const auto d = check::decide_on_health(check_finding(2, {1})({}), {true, false});
  CHECK(d.excluded.empty());
  CHECK(d.findings ==
        std::vector<std::string>{
            "node 1 (h1): mlx5_1 nic_bandwidth_low (block): mlx5_1 carries 50% of the job's median"});
  CHECK_THAT(d.notes.back(), Catch::Contains("health ignored (--ignore-health): node 1 (h1): mlx5_1"));
}

TEST_CASE("health: the health pass is held to the calibration's own hang bound (--watchdog-scale)") {
  // A loaded machine: tune was given a longer bound; the health pass that gates it must not time out sooner.
  auto c = world();
  double seen = 0.0;
  c.check_health = [&](const HealthCheckRequest& q) -> check::ClusterHealth {
    seen = q.runner.watchdog_scale;
    return {};
  };
  auto r = simulated(2);
  r.watchdog_scale = 4.0;
  set_up_calibration(r, c);
  CHECK(seen == 4.0);
}

TEST_CASE("health: the fabric settings every node agreed on go into the profile's [env]") {
  auto c = world();
  c.check_health =
      check_finding(2, {}, nullptr, {{"NCCL_IB_GID_INDEX", "3"}, {"NCCL_SOCKET_IFNAME", "=eth0"}});
  auto s = set_up_calibration(simulated(2), c);
  CHECK(s.tune.header.fabric_env.at("NCCL_IB_GID_INDEX") == "3");
  const auto profile = build_profile({}, s.tune.header);
  CHECK(profile.env ==
        std::map<std::string, std::string>{{"NCCL_IB_GID_INDEX", "3"}, {"NCCL_SOCKET_IFNAME", "=eth0"}});
  CHECK(profile.provenance.health == "2 node(s) checked by check (test): none blocks");
}

namespace {

CalibrationRequest gpu_dry_run() {
  CalibrationRequest r;
  r.dry_run = true;
  r.command = "nccl-autotune tune --dry-run";
  return r;
}

CalibrationContext probed(std::function<topology::Topology()> probe) {
  CalibrationContext c = world();
  c.probe_node = std::move(probe);
  return c;
}

topology::Topology h100_node() {
  return topology::load_example("h100-8x");
}

}  // namespace

TEST_CASE("set-up: a dry run on GPUs plans this node's probe at the launcher's, Slurm's or --nodes' count") {
  CalibrationRequest r = gpu_dry_run();
  r.launcher = "srun -N 16 --ntasks-per-node 8";
  auto s = set_up_calibration(r, probed(h100_node));
  CHECK(s.mode == CalibrationMode::orchestrator);
  CHECK(s.tune.space.scales.size() == 9);  // 1x8, and n x 1 and n x 8 for n = 2 .. 16
  CHECK(std::find(s.tune.space.scales.begin(), s.tune.space.scales.end(), runners::Scale{16, 128}) !=
        s.tune.space.scales.end());
  CHECK(s.tune.header.cluster == "node17-16n");
  CHECK(std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& n) {
    return n == "planned for 16 node(s) (the launcher) of 8 GPUs (the probe of this node)";
  }));
  // A launcher that runs fewer ranks per node than the node has GPUs: its ranks are the plan's.
  r.launcher = "srun -N 4 --ntasks-per-node 2";
  auto fewer = set_up_calibration(r, probed(h100_node));
  CHECK(fewer.tune.header.gpus_per_node == 2);
  CHECK(std::find(fewer.tune.space.scales.begin(), fewer.tune.space.scales.end(), runners::Scale{4, 8}) !=
        fewer.tune.space.scales.end());
  CHECK(std::any_of(fewer.notes.begin(), fewer.notes.end(), [](const std::string& n) {
    return n == "planned for 4 node(s) (the launcher) of 2 GPUs (the launcher's ranks per node)";
  }));
  // Inside a Slurm allocation the default launcher says the node count; --nodes says it for any launcher.
  CalibrationContext slurm = probed(h100_node);
  slurm.env = {{"SLURM_JOB_ID", "77"}, {"SLURM_NNODES", "4"}};
  CHECK(set_up_calibration(gpu_dry_run(), slurm).tune.header.nodes == 4);
  r.launcher = "mpirun -np 32";
  CHECK_THROWS_WITH(set_up_calibration(r, probed(h100_node)), Catch::Contains("give --nodes N"));
  r.plan_nodes = 4;
  auto four = set_up_calibration(r, probed(h100_node));
  CHECK(four.tune.space.scales == std::vector<runners::Scale>{{1, 8}, {2, 2}, {2, 16}, {4, 4}, {4, 32}});
  // Nothing started, nothing named from a runner: the plan's figures come from the plan alone.
  const auto plan = plan_tune(four.tune);
  CHECK(plan.scales.size() == 5);
  CHECK(plan.measurements > 0);
}

TEST_CASE("set-up: a dry run on GPUs probes this node once and plans once, for the plan and the rounds") {
  CalibrationRequest r = gpu_dry_run();
  r.launcher = "srun -N 16 --ntasks-per-node 8";
  int probes = 0;
  CalibrationContext c = probed([&probes] {
    ++probes;
    return h100_node();
  });
  c.env = {{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "16"}};
  auto s = set_up_calibration(r, c);
  CHECK(probes == 1);
  REQUIRE(s.plan);
  CHECK(s.plan->scales.size() == s.tune.space.scales.size());
  CHECK(s.plan->measurements == plan_tune(s.tune).measurements);
  // The rounds come from that plan: every scale of a round is one of the plan's.
  REQUIRE_FALSE(s.orchestration.rounds.empty());
  for (const auto& round : s.orchestration.rounds)
    for (const auto& g : round.groups)
      CHECK(std::any_of(s.plan->scales.begin(), s.plan->scales.end(),
                        [&g](const ScalePlan& sp) { return sp.scale == g.scale; }));
}

TEST_CASE("set-up: a dry run on GPUs without GPUs to plan for, or plan options without --dry-run, refused") {
  CalibrationRequest r = gpu_dry_run();
  CHECK_THROWS_WITH(set_up_calibration(r, probed([] { return topology::Topology{}; })),
                    Catch::Contains("the probe of this node: expected GPUs to plan for, found none"));
  CHECK_THROWS_WITH(set_up_calibration(r, world()), Catch::Contains("give --topology FILE"));
  r.dry_run = false;
  r.plan_nodes = 8;
  CHECK_THROWS_AS(set_up_calibration(r, probed(h100_node)), InputError);
  r.dry_run = true;
  r.plan_nodes = 0;
  CHECK_THROWS_WITH(set_up_calibration(r, probed(h100_node)),
                    Catch::Contains("--nodes: expected at least 1"));
}

TEST_CASE("set-up: a dry run under mpirun plans the job's own nodes and ranks per node") {
  auto state = std::make_shared<test::ThreadGroupState>(16, std::chrono::milliseconds(1000));
  test::ThreadProcessGroup rank0(state, 0, 4);  // 4 nodes x 4 ranks; only the plan is asked of it
  CalibrationContext mpi = probed(h100_node);
  mpi.processes = &rank0;
  mpi.under_mpi = true;
  auto s = set_up_calibration(gpu_dry_run(), mpi);
  CHECK(s.mode == CalibrationMode::in_process);
  CHECK(s.tune.space.scales == std::vector<runners::Scale>{{1, 4}, {2, 2}, {2, 8}, {4, 4}, {4, 16}});
}

TEST_CASE("set-up: on GPUs scales run side by side where the launcher can start a group on its own nodes") {
  CalibrationRequest r;
  r.command = "nccl-autotune tune";
  r.ignore_health = true;
  r.launcher = "srun -N 16 --ntasks-per-node 8";
  // Inside an allocation (salloc, sbatch): srun places each group on its nodes with --relative.
  CalibrationContext allocation = probed(h100_node);
  allocation.env = {{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "16"}};
  auto s = set_up_calibration(r, allocation);
  REQUIRE(s.mode == CalibrationMode::orchestrator);
  REQUIRE_FALSE(s.orchestration.rounds.empty());
  CHECK(s.orchestration.narrow_launcher);
  // Every group of a round on nodes of its own, within the 16 the launcher asks for.
  for (const auto& round : s.orchestration.rounds) {
    int next = 0;
    for (const auto& g : round.groups) {
      CHECK(g.first_node >= next);
      next = g.first_node + g.scale.nodes;
    }
    CHECK(next <= 16);
  }
  const auto& g = s.orchestration.rounds.front().groups.back();
  const auto narrowed = launcher_for_group(s.launcher, g);
  REQUIRE(narrowed);
  CHECK(std::find(narrowed->words.begin(), narrowed->words.end(),
                  "--relative=" + std::to_string(g.first_node)) != narrowed->words.end());
  // mpirun without a host list can neither say its nodes nor be narrowed: every scale in turn, and why.
  r.launcher = "mpirun -np 128";
  auto turn = set_up_calibration(r, probed(h100_node));
  CHECK(turn.orchestration.rounds.empty());
  CHECK(std::any_of(turn.notes.begin(), turn.notes.end(),
                    [](const std::string& n) { return n.find("scales run in turn: ") == 0; }));
  // Outside an allocation every srun is an allocation of its own, on nodes no group can name.
  r.launcher = "srun -N 16 --ntasks-per-node 8";
  auto outside = set_up_calibration(r, probed(h100_node));
  CHECK(outside.orchestration.rounds.empty());
  CHECK(std::any_of(outside.notes.begin(), outside.notes.end(),
                    [](const std::string& n) { return n.find("scales run in turn: srun outside") == 0; }));
  r.concurrent = false;
  CHECK(set_up_calibration(r, allocation).orchestration.rounds.empty());
}

TEST_CASE("health: the journal header keeps each calibrated node's host, without the nodes left out") {
  auto c = world();
  c.check_health = check_finding(8, {3, 5});
  auto r = simulated(8);
  r.exclude_unhealthy = true;
  auto s = set_up_calibration(r, c);
  CHECK(s.tune.header.hosts == std::vector<std::string>{"h0", "h1", "h2", "h4", "h6", "h7"});
  // A gate that could not name every host names none: node n must mean one host or none.
  c.check_health = [](const HealthCheckRequest&) {
    check::ClusterHealth h;
    h.checked_by = "check (test)";
    h.nodes = {{0, "h0", {}}, {1, "", {}}};
    return h;
  };
  CHECK(set_up_calibration(simulated(2), c).tune.header.hosts.empty());
}
