// nccl-autotune bench: a standalone measurement like nccl-tests, through the same runners tune uses.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/simulator_options.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "common/text.hpp"
#include "measure/runner_factory.hpp"
#include "nccl_tests/bench_table.hpp"
#include "runners/process_group.hpp"
#include "simulator/fidelity.hpp"
#include "simulator/sim_model.hpp"

namespace autotune::cli {

namespace {

// nccl-tests times every size out-of-place and in-place. A runner measures one of the two (its buffers are
// laid out for it), so each half gets its own runner, one after the other; the simulator draws the in-place
// half with the next seed, as a second measurement has its own noise. `info` is the out-of-place runner's.
std::vector<nccl_tests::BenchRow> measure_both_halves(const measure::RunnerOptions& options,
                                                      const std::vector<nccl::Operation>& kinds,
                                                      const std::vector<uint64_t>& sizes,
                                                      const runners::Candidate& candidate, int reps,
                                                      runners::RunnerInfo& info) {
  const bool progress = runners::job_processes().is_root() && isatty(STDERR_FILENO);
  std::vector<nccl_tests::BenchRow> rows;
  for (bool in_place : {false, true}) {
    measure::RunnerOptions half = options;
    half.in_place = in_place;
    half.seed = options.seed + (in_place ? 1 : 0);
    auto runner = measure::make_runner(half);
    size_t row = 0;
    for (auto c : kinds) {
      // One size per batch so progress shows and a long real sweep can be watched.
      for (uint64_t bytes : sizes) {
        runners::MeasureRequest r;
        r.set_operation(c);
        r.bytes = bytes;
        r.candidate = candidate;
        r.repetitions = reps;
        auto out = runner->run(std::span<const runners::MeasureRequest>(&r, 1));
        if (!in_place) rows.push_back({});
        (in_place ? rows[row].in_place : rows[row].out_of_place) = out.at(0);
        ++row;
        if (progress)
          std::fprintf(stderr, "\r%s %s %llu B   ", in_place ? "in-place" : "out-of-place",
                       std::string(nccl::name(c)).c_str(), static_cast<unsigned long long>(bytes));
      }
    }
    if (!in_place) info = runner->info();
  }
  if (progress) std::fprintf(stderr, "\r%50s\r", "");
  return rows;
}

// What --algo, --proto and --channels force (empty and 0: NCCL decides).
runners::Candidate forced_candidate(const std::string& algo, const std::string& proto, int channels) {
  runners::Candidate candidate;
  candidate.channels = channels;
  if (!algo.empty()) {
    candidate.algorithm = nccl::parse_algorithm(algo);
    if (!candidate.algorithm)
      throw InputError("<arguments>", 0, "an algorithm name for --algo, found '" + algo + "'");
  }
  if (!proto.empty()) {
    candidate.protocol = nccl::parse_protocol(proto);
    if (!candidate.protocol)
      throw InputError("<arguments>", 0, "a protocol name for --proto, found '" + proto + "'");
  }
  return candidate;
}

// NCCL's tuner never sees a point-to-point operation, so the plugin cannot force anything for it.
void refuse_forced_point_to_point(const std::vector<nccl::Operation>& kinds,
                                  const runners::Candidate& candidate) {
  for (auto op : kinds)
    if (nccl::is_point_to_point(op) && !candidate.is_default())
      throw InputError("<arguments>", 0,
                       "--algo, --proto and --channels only with collectives: nothing can be forced for " +
                           std::string(nccl::name(op)) +
                           " (NCCL's tuner never sees point-to-point operations)");
}

// Under `nccl-autotune run` the job's environment names a profile, which nccl-tests would run with; bench
// measures NCCL's own choice (its runners clear the profile's variables so "nothing forced" means NCCL), so
// it says so rather than let a user take its figures for the tuned job's.
void say_if_profile_not_applied() {
  const char* profile = std::getenv("NCCL_AUTOTUNE_PROFILE");
  if (!profile || !*profile || !runners::job_processes().is_root()) return;
  std::cerr
      << "bench: NCCL_AUTOTUNE_PROFILE is set (" << printable(profile)
      << "), but bench measures NCCL's own choice (or what --algo/--proto/--channels force): the profile "
         "is not applied. To measure the tuned job, run nccl-tests under `nccl-autotune run`; "
         "`nccl-autotune verify` measures the profile's rules against NCCL's choice.\n";
}

}  // namespace

int cmd_bench(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune bench [-c allreduce,...] [-b 8] [-e 128M] [-f 2] [--algo A --proto P --channels N] " +
      std::string(kSimulatorUsage) +
      " [--iters N] [--reps N] [--cuda-graph] [--watchdog-scale X] [--format table|json]";
  spec.description =
      "Measures collectives and point-to-point operations (alltoall, sendrecv, gather, scatter, with\n"
      "nccl-tests' sizes and busbw) over a size range, out-of-place and in-place, and prints nccl-tests'\n"
      "table (one test per operation, plus the algorithm/protocol/channels NCCL ran; import-nccl-tests\n"
      "reads it back) or JSON. On GPUs it runs real NCCL (under mpirun: one process per GPU; otherwise all\n"
      "GPUs of this node); --simulate uses the labelled model of NCCL instead. --algo/--proto/--channels\n"
      "force NCCL's choice of a collective through the tuner plugin; without them NCCL decides (a profile,\n"
      "even one `run` exported, is not applied: run nccl-tests under `nccl-autotune run` to measure a tuned\n"
      "job).";
  std::string collectives = "allreduce", min_size = "8", max_size = "128M", algo, proto, format = "table";
  uint64_t factor = 2;
  int channels = 0, iters = 0, reps = 5;
  double watchdog_scale = 1.0;
  SimulatorArgs sim_args;
  spec.options.add_options()(
      "collectives,c", po::value(&collectives)->default_value(collectives),
      "comma list of collectives and point-to-point operations (alltoall, sendrecv, gather, scatter)")(
      "minbytes,b", po::value(&min_size)->default_value(min_size), "smallest size (8, 64K, 1M, 8G)")(
      "maxbytes,e", po::value(&max_size)->default_value(max_size), "largest size")(
      "stepfactor,f", po::value(&factor)->default_value(factor), "size multiplier between steps")(
      "algo", po::value(&algo),
      "force an algorithm (ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat)")(
      "proto", po::value(&proto), "force a protocol (ll, ll128, simple)")(
      "channels", po::value(&channels)->default_value(0), "force a channel count (0 = NCCL decides)")(
      "iters", po::value(&iters)->default_value(0), "operations per timed repetition (0 = scaled with size)")(
      "reps", po::value(&reps)->default_value(5), "timed repetitions per size")(
      "cuda-graph", "capture each timed loop as a CUDA graph and launch that (nccl-tests' -G 1)")(
      "watchdog-scale", po::value(&watchdog_scale)->default_value(1.0),
      "multiplies how long an operation may take before it is declared hung (slow fabrics, tests)")(
      "format", po::value(&format)->default_value(format), "table or json");
  add_simulator_options(spec.options, sim_args, "use the labelled simulator instead of GPUs");
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (format != "table" && format != "json")
    throw InputError("<arguments>", 0, "--format table or json, found '" + format + "'");
  if (reps < 1) throw InputError("<arguments>", 0, "--reps of at least 1, found " + std::to_string(reps));
  if (channels < 0)
    throw InputError("<arguments>", 0, "--channels of 0 or more, found " + std::to_string(channels));

  const runners::Candidate candidate = forced_candidate(algo, proto, channels);
  auto kinds = parse_operation_list(collectives, "--collectives");
  refuse_forced_point_to_point(kinds, candidate);
  auto sizes =
      nccl_tests::size_sweep(require_byte_size(min_size, "-b"), require_byte_size(max_size, "-e"), factor);

  const std::optional<sim::SimulatorSpec> simulated = simulator_spec(*vm, sim_args);
  measure::RunnerOptions options =
      simulated ? measure::simulated_runner_options(*simulated) : measure::RunnerOptions{};
  options.iterations = iters;
  options.watchdog_scale = require_watchdog_scale(watchdog_scale);
  options.cuda_graph = vm->count("cuda-graph") > 0;
  options.max_bytes = sizes.back();
  if (simulated) {
    // NCCL reads its variables from the environment; so does the model of it (NCCL_NVLS_ENABLE=0 bench ...).
    for (const auto& name : sim::modelled_env_names())
      if (const char* value = std::getenv(name.c_str())) options.process_env[name] = value;
  }

  const auto& processes = runners::job_processes();
  say_if_profile_not_applied();
  runners::RunnerInfo info;
  auto rows = measure_both_halves(options, kinds, sizes, candidate, reps, info);
  if (!processes.is_root()) return kExitOk;  // rank 0 reports
  std::cout << (format == "json" ? nccl_tests::format_json(info, rows)
                                 : nccl_tests::format_table(info, rows));
  if (options.simulate && format != "json")
    std::cout << sim::format_published_for(*options.topology, options.deviations);
  int wrong = 0;
  for (const auto& r : rows)
    wrong += (r.out_of_place.outcome == runners::Outcome::wrong_result) +
             (r.in_place.outcome == runners::Outcome::wrong_result);
  return wrong ? kExitFailed : kExitOk;
}

}  // namespace autotune::cli
