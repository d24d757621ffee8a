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
// value literally up to the end of the line (quotes would become part of the value; spaces, '=', ',' and a
// carriage return arrive as they are: checked against Slurm 22.05 by tests/slurm); a value holding a line
// feed cannot be expressed there and is refused with std::runtime_error (see slurm_refusal). json: the whole
// plan.
std::string format_env(const LaunchPlan& plan, EnvFormat format);

// Why the plan cannot be given to a Slurm TaskProlog ("NAME holds a line break, ..."), or "" when it can.
// Names the variable, never its value: a TaskProlog's stderr is read with its stdout (Slurm 22.05 to 25.x),
// so a value printed there could itself become an export line.
std::string slurm_refusal(const LaunchPlan& plan);

// `text` as one line: line feeds and carriage returns written as \n and \r, so that a message about a path
// holding them stays one line (and, under a TaskProlog, cannot be read as an export line).
std::string one_line(std::string_view text);

// The --dry-run account: the profile and how it was found, each variable with its source and decision,
// and the command that would run.
std::string format_dry_run(const LaunchPlan& plan, const std::vector<std::string>& command);

}  // namespace autotune::launcher
