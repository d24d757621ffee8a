#pragma once
// The multi-job side of `tune`: NCCL reads process-wide settings (NCCL_IB_HCA, NCCL_CROSS_NIC, ...) once per
// process, so each setting is measured by a job of its own: worker processes (`tune --worker`) started
// directly or through a launcher (mpirun, srun), with the setting in their environment. Each job writes its
// own journal part; the orchestrator waits for each, records a job that fails with the tail of its output,
// merges the parts into the calibration's journal and derives the profile from all of them.
// Not thread-safe; starts one job at a time and waits for it on the calling thread.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/concurrent_scales.hpp"
#include "calibrate/tune.hpp"
#include "common/clock.hpp"
#include "common/process_launcher.hpp"
#include "runners/process_setting.hpp"
#include "search/journal.hpp"

namespace autotune::calibrate {

// Splits a command line into words by the shell's quoting rules ('single', "double", backslash), without
// expansion of any kind: the launcher is run with execvp, never through a shell. Throws InputError for an
// unterminated quote or a trailing backslash.
std::vector<std::string> split_shell_words(std::string_view text);

struct Launcher {
  std::vector<std::string> words;  // prefix of every job's command line; empty = the worker runs directly
  std::string origin;              // how it was chosen, for the output
};

// "mpirun -np 16 (--launcher)": the words and how they were chosen, for people.
std::string describe(const Launcher& launcher);

// The launcher for a calibration: the one given (--launcher), else srun when inside a Slurm allocation
// (SLURM_JOB_ID and SLURM_NNODES set) and measuring real GPUs, else none. `gpus_per_node` is the
// --ntasks-per-node of the Slurm default. `env` is the orchestrator's environment.
Launcher choose_launcher(const std::string& given, bool simulate, int gpus_per_node,
                         const std::map<std::string, std::string>& env);

// GPUs per node for the Slurm default: SLURM_GPUS_ON_NODE (a batch script, a step), else what
// --gpus-per-node asked (SLURM_GPUS_PER_NODE: all salloc's shell has), else the /dev/nvidiaN device files,
// else 1.
int local_gpu_count(const std::map<std::string, std::string>& env);

// Nodes a launcher line asks for (srun -N/--nodes, mpirun -H/--host list), when it says.
std::optional<int> launcher_nodes(const std::vector<std::string>& words);
// Ranks per node a launcher line asks for (srun --ntasks-per-node, the slots of mpirun's first -H/--host
// host), when it says.
std::optional<int> launcher_ranks_per_node(const std::vector<std::string>& words);

// The command line of one job: the launcher (under mpirun/mpiexec with `-x NAME` for every variable of the
// setting, so that it reaches every rank; srun exports the whole environment by default), then the worker.
std::vector<std::string> job_command(const Launcher& launcher, const std::filesystem::path& exe,
                                     const std::vector<std::string>& worker_args,
                                     const runners::ProcessSetting& setting);

// Where job N keeps its journal part and its output: in <journal stem>.parts/ next to the journal.
struct JobFiles {
  std::filesystem::path part;
  std::filesystem::path log;
};
JobFiles job_files(const std::filesystem::path& journal, int job_id);

// Runs one job to its end and returns "" when it exited with status 0, otherwise what went wrong. With a
// limit, a job still running at the limit is sent SIGTERM, and SIGKILL 10 s later if it ignores that.
std::string run_job(ProcessLauncher& launcher, const Clock& clock, const ProcessSpec& spec,
                    std::optional<double> limit, const std::function<void()>& tick = {});

// Watches a running job's log for its progress lines (calibrate/progress_report.hpp): every `interval_s` on
// `clock`, the newest one written after `from`, when it changed, goes to `tell` as "progress {...}".
std::function<void()> progress_watch(const std::filesystem::path& log, uintmax_t from, const Clock& clock,
                                     double interval_s, std::function<void(const std::string&)> tell);

// The last lines of what a job wrote to its log from `from` on (earlier runs' output stays above), for the
// journal and the summary.
std::string output_tail(const std::filesystem::path& log, uintmax_t from, size_t max_lines = 20,
                        size_t max_chars = 4000);

struct OrchestratorOptions {
  Launcher launcher;
  std::filesystem::path exe;                      // this program
  std::vector<std::string> measure_args;          // the measurement options, passed to every worker as given
  std::vector<runners::ProcessSetting> settings;  // one job each, in this order (job id = index)
  std::filesystem::path journal;                  // the merged journal
  bool resume = false;  // keep the parts: finished jobs are not run again, interrupted ones resume; without
                        // it the previous journal and parts are kept aside (keep_previous_journal)
  std::optional<std::chrono::duration<double>> budget;  // shared by the jobs still to run
  // With a budget, a job still running after twice its share plus this (start-up, NCCL initialisation) is
  // stopped (SIGTERM, SIGKILL 10 s later) and recorded as failed: a hung launcher must not hold the rest.
  std::chrono::duration<double> job_grace{120.0};
  double progress_interval_s = 10.0;  // how often a running job's log is read for its progress
  search::JournalHeader
      header;  // of the merged journal; settings are filled in, the rest of what the
               // workers know (scales, GPUs, NCCL version) is taken from their parts when empty
  double min_gain = 0.03;
  // Scales run side by side on disjoint nodes before each job's own worker (calibrate/group_jobs.hpp); empty:
  // the job's one worker measures every scale in turn.
  std::vector<ConcurrentRound> rounds;
  // Whether a group's launcher is narrowed to its nodes (calibrate/group_launcher.hpp); false for simulated
  // workers, which all run here whatever nodes they stand for.
  bool narrow_launcher = true;
  // A line for people as something happens outside the jobs (a previous journal kept); may be empty.
  std::function<void(const std::string&)> say;
  // Seams (tests): how jobs are started and time is kept; null = the real ones (fork/exec with stop signals
  // forwarded to the running job, the steady clock).
  ProcessLauncher* processes = nullptr;
  const Clock* clock = nullptr;
};

// The worker's own arguments for job `job` writing into `part`, with its share of the budget when it has one.
std::vector<std::string> worker_arguments(const OrchestratorOptions& o, int job,
                                          const std::filesystem::path& part, std::optional<double> share);

// What the workers know and the orchestrator did not (scales, GPUs, NCCL version, the layout's groups),
// from a part's header.
void adopt_part_header(search::JournalHeader& header, const search::JournalHeader& part);

// Whether a job's part says the job finished.
bool part_finished(const search::JournalContents& part, const std::string& setting_id);

struct JobNotice {
  int job = 0;
  int jobs_total = 0;
  std::string setting;
  std::string what;  // "started: <command>", "progress {...}", "finished", "already finished", "failed: ..."
};
using JobNoticeFn = std::function<void(const JobNotice&)>;

// Runs every job, merges the parts and derives the profile. A job that fails (exit status, signal, cannot
// start) is recorded in the journal and in TuneResult::jobs with the tail of its output; the others go on.
// Throws std::runtime_error when no job measured anything, InputError for a part that is not a journal.
TuneResult orchestrate(const OrchestratorOptions& options, const JobNoticeFn& notice = {});

}  // namespace autotune::calibrate
