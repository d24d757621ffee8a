// nccl-autotune env: print the environment `run` would give a job, for batch scripts, Slurm and tools.
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profile_choice.hpp"
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
  add_profile_choice_options(spec, "exit 2 (1 when the plugin is missing) when no profile can be used");
  spec.options.add_options()("format", po::value<std::string>()->default_value("sh"), "sh, slurm or json");
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  const launcher::EnvFormat format = launcher::parse_env_format((*vm)["format"].as<std::string>());

  const launcher::LaunchOptions options = profile_choice(*vm);
  const bool strict = vm->count("strict") > 0;

  const launcher::LaunchPlan plan =
      launcher::plan_launch(options, launcher::default_services(), launcher::process_environment());
  if (!plan.tuned() && plan.problem != launcher::Problem::disabled)
    std::fprintf(stderr, "nccl-autotune env: %s\n", launcher::one_line(plan.problem_text).c_str());
  if (format == launcher::EnvFormat::slurm && plan.tuned()) {
    // Nothing rather than part: a job with the plugin but without its profile's settings is no job we tuned.
    if (std::string why = launcher::slurm_refusal(plan); !why.empty()) {
      std::fprintf(stderr, "nccl-autotune env: %s; nothing exported, the job runs untuned\n", why.c_str());
      return strict ? kExitBadInput : kExitOk;
    }
  }
  report_plan_notes(plan, "nccl-autotune env");
  std::cout << launcher::format_env(plan, format);
  std::cout.flush();
  return strict ? plan.strict_exit_status() : kExitOk;
}

}  // namespace autotune::cli
