// nccl-autotune: one binary, one subcommand per job. This file only dispatches and turns errors into exit
// statuses; every subcommand lives in its own cmd_*.cpp.

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "common/input_error.hpp"

namespace {

using autotune::cli::Args;

struct Command {
  std::string_view name;
  int (*run)(const Args&);
  std::string_view summary;
};

const Command kCommands[] = {
    {"probe", autotune::cli::cmd_probe, "describe this node (or a recorded topology file)"},
    {"bench", autotune::cli::cmd_bench, "measure collectives over a size range, like nccl-tests"},
    {"check", autotune::cli::cmd_check, "check every node's health and baselines before a calibration"},
    {"tune", autotune::cli::cmd_tune, "calibrate the cluster and write a profile"},
    {"profile", autotune::cli::cmd_profile, "list, show, validate, diff, export, import profiles"},
    {"run", autotune::cli::cmd_run, "run a command with the cluster's profile applied"},
    {"env", autotune::cli::cmd_env, "print the environment `run` would set"},
    {"verify", autotune::cli::cmd_verify, "check that a profile's rules still win (after an NCCL upgrade)"},
    {"report", autotune::cli::cmd_report, "render an HTML report of a calibration"},
    {"import-nccl-tests", autotune::cli::cmd_import_nccl_tests, "turn nccl-tests logs into measurements"},
    {"explain", autotune::cli::cmd_explain, "show what a profile decides for a communicator at every size"},
    {"learn", autotune::cli::cmd_learn, "fold production telemetry into the journal and revise the profile"},
    {"metrics", autotune::cli::cmd_metrics,
     "write the store's profiles, production busbw and upkeep as Prometheus metrics"},
    {"journal", autotune::cli::cmd_journal,
     "check a calibration journal: every line that cannot be read, named"},
};

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: nccl-autotune [--version] [--help] COMMAND [ARGS...]\n\ncommands:\n");
  for (const auto& c : kCommands)
    std::fprintf(out, "  %-18s %.*s\n", std::string(c.name).c_str(), static_cast<int>(c.summary.size()),
                 c.summary.data());
  std::fprintf(out, "\n`nccl-autotune COMMAND --help` describes each command.\n");
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

int main(int argc, char** argv) {
  Args args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(stderr);
    return autotune::kExitBadInput;
  }
  const std::string first = args.front();  // a copy: args loses its front before errors name the command
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(stdout);
    return autotune::kExitOk;
  }
  if (first == "--version") {
    std::printf("%s\n", autotune::cli::version_text().c_str());
    return autotune::kExitOk;
  }
  const Command* command = nullptr;
  for (const auto& c : kCommands)
    if (c.name == first) command = &c;
  if (!command) {
    std::fprintf(stderr, "nccl-autotune: '%s' is not a command", first.c_str());
    const Command* nearest = nullptr;
    size_t best = 3;
    for (const auto& c : kCommands) {
      size_t d = edit_distance(first, c.name);
      if (d < best) best = d, nearest = &c;
    }
    if (nearest) std::fprintf(stderr, "; did you mean '%s'?", std::string(nearest->name).c_str());
    std::fprintf(stderr, " (see nccl-autotune --help)\n");
    return autotune::kExitBadInput;
  }
  args.erase(args.begin());
  try {
    return command->run(args);
  } catch (const autotune::InputError& e) {
    std::fprintf(stderr, "nccl-autotune %s: %s\n", first.c_str(), e.what());
    return autotune::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nccl-autotune %s: error: %s\n", first.c_str(), e.what());
    return autotune::kExitFailed;
  }
}
