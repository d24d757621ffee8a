// nccl-autotune env: print the environment `run` would give a job, for batch scripts, Slurm and tools.
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/input_error.hpp"
#include "launcher/default_services.hpp"
#include "launcher/env_format.hpp"
#include "launcher/launch_plan.hpp"

namespace autotune::cli {

int cmd_env(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune env [--profile FILE | --cluster NAME] [--store DIR] [--override] [--strict] "
      "[--format sh|slurm|json]";
  spec.description =
      "Prints what `nccl-autotune run` would export, resolved the same way:\n"
      "  sh     export NAME='value' lines, for eval \"$(nccl-autotune env)\" in a batch script\n"
      "  slurm  export NAME=value lines, for a Slurm TaskProlog\n"
      "  json   the whole decision (profile, origin, every variable and its source), for tools\n"
      "Without a usable profile, sh and slurm print nothing (one line on stderr says why).";
  spec.options.add_options()("profile", po::value<std::string>(), "profile file to use")(
      "cluster", po::value<std::string>(), "use the store's profile for this cluster name")(
      "store", po::value<std::string>(),
      "profile store directory (default: $NCCL_AUTOTUNE_STORE, XDG data dir)")(
      "override", "the profile's values replace ones already set in the environment")(
      "strict", "exit 2 (1 when the plugin is missing) when no profile can be used")(
      "format", po::value<std::string>()->default_value("sh"), "sh, slurm or json");
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (vm->count("profile") && vm->count("cluster"))
    throw InputError("<arguments>", 0, "give --profile or --cluster, not both");
  const launcher::EnvFormat format = launcher::parse_env_format((*vm)["format"].as<std::string>());

  launcher::LaunchOptions options;
  if (vm->count("profile")) options.profile = (*vm)["profile"].as<std::string>();
  if (vm->count("cluster")) options.cluster = (*vm)["cluster"].as<std::string>();
  if (vm->count("store")) options.store = (*vm)["store"].as<std::string>();
  options.override_user = vm->count("override") > 0;
  const bool strict = vm->count("strict") > 0;

  const launcher::LaunchPlan plan =
      launcher::plan_launch(options, launcher::default_services(), launcher::process_environment());
  if (!plan.tuned() && plan.problem != launcher::Problem::disabled)
    std::fprintf(stderr, "nccl-autotune env: %s\n", plan.problem_text.c_str());
  if (plan.tuned()) {
    for (const auto& n : plan.notes) std::fprintf(stderr, "nccl-autotune env: %s\n", n.c_str());
    if (auto line = launcher::user_conflicts_line(plan.vars); !line.empty())
      std::fprintf(stderr, "nccl-autotune env: %s\n", line.c_str());
  }
  std::cout << launcher::format_env(plan, format);
  std::cout.flush();
  return strict ? plan.strict_exit_status() : kExitOk;
}

}  // namespace autotune::cli
