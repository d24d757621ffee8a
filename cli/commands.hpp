#pragma once
// Each subcommand of nccl-autotune: wiring only (options in, module calls, output out). Each takes its own
// arguments (after the subcommand name) and returns the process exit status; InputError thrown from inside
// becomes one stderr line and exit 2 in main.

#include <string>
#include <vector>

namespace autotune::cli {

using Args = std::vector<std::string>;

int cmd_probe(const Args& args);
int cmd_tune(const Args& args);
int cmd_check(const Args& args);
int cmd_bench(const Args& args);
int cmd_profile(const Args& args);
int cmd_run(const Args& args);
int cmd_env(const Args& args);
int cmd_report(const Args& args);
int cmd_verify(const Args& args);
int cmd_import_nccl_tests(const Args& args);
int cmd_explain(const Args& args);
int cmd_learn(const Args& args);
int cmd_journal(const Args& args);
int cmd_metrics(const Args& args);

// "nccl-autotune 0.1.0 (built with NCCL 2.28.9; runtime libnccl.so.2: 2.28.9)"
std::string version_text();

}  // namespace autotune::cli
