// nccl-autotune run: apply the node's profile to a command's environment and exec it.
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profile_choice.hpp"
#include "common/input_error.hpp"
#include "launcher/default_services.hpp"
#include "launcher/env_format.hpp"
#include "launcher/exec.hpp"
#include "launcher/launch_plan.hpp"

namespace autotune::cli {

int cmd_run(const Args& args) {
  // Everything after the first "--" is the command, untouched by our option parser.
  Args ours = args;
  Args command;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      ours.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
      command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
  }
  CommandSpec spec;
  spec.usage =
      "nccl-autotune run [--profile FILE | --cluster NAME] [--store DIR] [--override] [--strict] "
      "[--dry-run] -- CMD ARGS...";
  spec.description =
      "Finds the profile for this node (--profile, --cluster, $NCCL_AUTOTUNE_PROFILE, else the store's "
      "profile\n"
      "whose fingerprint matches this node), exports its [env], NCCL_TUNER_PLUGIN and "
      "NCCL_AUTOTUNE_PROFILE,\n"
      "then execs CMD in this process. Variables you set win (reported on stderr) unless --override.\n"
      "NCCL_TUNER_PLUGIN=none turns tuning off. When no usable profile is found the command runs untuned\n"
      "with one line on stderr, or with --strict nothing runs and the status is 2.";
  add_profile_choice_options(spec, "exit 2 (1 when the plugin is missing) instead of running untuned");
  spec.options.add_options()("dry-run", "print what would be set and why, and run nothing")(
      "format", po::value<std::string>()->default_value("text"), "--dry-run output: text or json");
  auto vm = parse_command_line(spec, ours);
  if (!vm) return kExitOk;
  const std::string format = (*vm)["format"].as<std::string>();
  if (format != "text" && format != "json")
    throw InputError("<arguments>", 0, "--format must be text or json, not '" + format + "'");
  const bool dry_run = vm->count("dry-run") > 0;
  if (command.empty() && !dry_run)
    throw InputError("<arguments>", 0, "expected the command after '--' (usage: " + spec.usage + ")");

  const launcher::LaunchOptions options = profile_choice(*vm);
  const bool strict = vm->count("strict") > 0;

  const launcher::LaunchPlan plan =
      launcher::plan_launch(options, launcher::default_services(), launcher::process_environment());
  if (dry_run) {
    std::cout << (format == "json" ? launcher::format_env(plan, launcher::EnvFormat::json)
                                   : launcher::format_dry_run(plan, command));
    return strict ? plan.strict_exit_status() : kExitOk;
  }

  std::vector<std::pair<std::string, std::string>> exports;
  if (plan.tuned()) {
    report_plan_notes(plan, "nccl-autotune run");
    for (const auto& v : plan.vars)
      if (v.needs_export()) exports.emplace_back(v.name, v.value());
  } else if (plan.problem != launcher::Problem::disabled) {
    if (strict) {
      std::fprintf(stderr, "nccl-autotune run: %s (--strict: not running the command)\n",
                   plan.problem_text.c_str());
      return plan.strict_exit_status();
    }
    std::fprintf(stderr, "nccl-autotune run: %s; running the command untuned\n", plan.problem_text.c_str());
  }
  const launcher::ExecFailure failure = launcher::exec_command(command, exports);
  std::fprintf(stderr, "nccl-autotune run: %s\n", failure.message.c_str());
  return failure.exit_status;
}

}  // namespace autotune::cli
