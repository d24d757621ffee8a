#include "cli/profile_choice.hpp"

#include <cstdio>
#include <string>

#include "common/input_error.hpp"
#include "common/job_rank.hpp"
#include "launcher/env_format.hpp"
#include "launcher/environment.hpp"

namespace autotune::cli {

void add_profile_choice_options(CommandSpec& spec, const char* strict_effect) {
  spec.options.add_options()("profile", po::value<std::string>(), "profile file to use")(
      "cluster", po::value<std::string>(), "use the store's profile for this cluster name")(
      "store", po::value<std::string>(),
      "profile store directory (default: $NCCL_AUTOTUNE_STORE, XDG data dir)")(
      "override", "the profile's values replace ones already set in the environment")("strict",
                                                                                      strict_effect);
}

launcher::LaunchOptions profile_choice(const po::variables_map& vm) {
  if (vm.count("profile") && vm.count("cluster"))
    throw InputError("<arguments>", 0, "give --profile or --cluster, not both");
  launcher::LaunchOptions options;
  if (vm.count("profile")) options.profile = vm["profile"].as<std::string>();
  if (vm.count("cluster")) options.cluster = vm["cluster"].as<std::string>();
  if (vm.count("store")) options.store = vm["store"].as<std::string>();
  options.override_user = vm.count("override") > 0;
  return options;
}

void report_plan_notes(const launcher::LaunchPlan& plan, const char* who) {
  // Every rank plans the same launch: one of them says so (not 128 lines on 128 ranks).
  if (!plan.tuned() || !is_first_rank()) return;
  for (const auto& n : plan.notes) std::fprintf(stderr, "%s: %s\n", who, launcher::one_line(n).c_str());
  if (auto line = launcher::user_conflicts_line(plan.vars); !line.empty())
    std::fprintf(stderr, "%s: %s\n", who, launcher::one_line(line).c_str());
}

}  // namespace autotune::cli
