#pragma once
// The options `run` and `env` share: which profile to use and how (resolved the same way by both).

#include "cli/options.hpp"
#include "launcher/launch_plan.hpp"

namespace autotune::cli {

// --profile, --cluster, --store, --override, --strict; `strict_effect` completes the --strict help text.
void add_profile_choice_options(CommandSpec& spec, const char* strict_effect);

// The launcher's options from those; InputError when --profile and --cluster are both given.
launcher::LaunchOptions profile_choice(const po::variables_map& vm);

// Lines about a tuned plan for stderr (notes, user-set variables that win), each prefixed by `who`; said by
// the job's first rank only (common/job_rank.hpp).
void report_plan_notes(const launcher::LaunchPlan& plan, const char* who);

}  // namespace autotune::cli
