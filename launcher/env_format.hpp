#pragma once
// The launch plan as text: for `eval` in a shell, for a Slurm TaskProlog, for tools (JSON), and the
// human-readable account `run --dry-run` gives. Only variables that launching would change are exported;
// the sh and Slurm forms print nothing for an untuned plan, so `eval "$(nccl-autotune env)"` is then a no-op.

#include <string>
#include <string_view>
#include <vector>

#include "launcher/launch_plan.hpp"

namespace autotune::launcher {

enum class EnvFormat { sh, slurm, json };
// Throws InputError("<arguments>", ...) for anything but sh, slurm, json.
EnvFormat parse_env_format(std::string_view text);

// POSIX shell single quoting: 'it'\''s' survives eval byte for byte.
std::string sh_quote(std::string_view value);

// sh: `export NAME='value'` lines. slurm: `export NAME=value` lines, unquoted, because slurmstepd takes the
// value literally up to the end of the line (quotes would become part of the value); a value holding a
// newline cannot be expressed there and is refused with std::runtime_error. json: the whole plan.
std::string format_env(const LaunchPlan& plan, EnvFormat format);

// The --dry-run account: the profile and how it was found, each variable with its source and decision,
// and the command that would run.
std::string format_dry_run(const LaunchPlan& plan, const std::vector<std::string>& command);

}  // namespace autotune::launcher
