#pragma once
// The simulator's options, one group that every command which can simulate adds (bench, check, tune,
// verify): --simulate, --example or --topology, --nodes, --seed, --noise and --sim-fault, with one set of
// messages and one default node.

#include <optional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "simulator/sim_spec.hpp"

namespace autotune::cli {

// For usage lines.
inline constexpr const char* kSimulatorUsage =
    "[--simulate [--example NAME | --topology FILE] [--nodes N] [--seed S] [--noise X] [--sim-fault F]...]";

// The options as given, before they are checked.
struct SimulatorArgs {
  std::string example, topology_file, seed = "1";
  int nodes = 1;
  double noise = 0.03;
  std::vector<std::string> faults;
};

// Adds the group to `options`; `simulate_help` says what --simulate does for the command.
void add_simulator_options(po::options_description& options, SimulatorArgs& args, const char* simulate_help);

// After parsing: with --simulate the spec, checked (sim::check_simulator_spec, every --sim-fault parsed);
// without it nullopt. Throws InputError("<arguments>", 0, ...) for the simulator's options without --simulate
// and for a bad value.
std::optional<sim::SimulatorSpec> simulator_spec(const po::variables_map& vm, const SimulatorArgs& args);

}  // namespace autotune::cli
