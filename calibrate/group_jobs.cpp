#include "calibrate/group_jobs.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "calibrate/group_launcher.hpp"
#include "search/journal.hpp"

namespace autotune::calibrate {

namespace {

struct RunningGroup {
  std::string name;  // "2x8 on nodes 4-5"
  JobFiles files;
  uintmax_t log_start = 0;
  std::unique_ptr<ChildProcess> child;
};

// A group this job measures now: its setting can change the scale (one-node shapes are shared otherwise,
// orchestrator.hpp) and its part is not finished.
bool group_to_run(const OrchestratorOptions& o, int job, const ScaleGroup& g, const JobFiles& files) {
  search::SearchSpace space;
  space.settings = o.settings;
  if (!measures_itself(space, o.settings[job], g.scale)) return false;
  std::error_code ec;
  return !std::filesystem::exists(files.part, ec) ||
         !part_finished(search::load_journal(files.part), o.settings[job].id);
}

ProcessSpec group_spec(const OrchestratorOptions& o, int job, const ScaleGroup& g, const JobFiles& files) {
  std::vector<std::string> args = worker_arguments(o, job, files.part, std::nullopt);
  args.insert(args.end(), {"--group-scale", runners::shape_text(g.scale), "--group-nodes", node_range(g)});
  // Checked when the rounds were chosen: every group's launcher narrows where it must.
  const Launcher launcher =
      o.narrow_launcher ? launcher_for_group(o.launcher, g).value_or(o.launcher) : o.launcher;
  ProcessSpec spec{job_command(launcher, o.exe, args, o.settings[job]), environment_map(), files.log};
  for (const auto& [k, v] : o.settings[job].env) spec.env[k] = v;
  return spec;
}

// The header and this job's records of the groups of rounds before `before`: each group's own scale only (a
// part seeded with earlier rounds' records holds them again).
size_t seed_part(const OrchestratorOptions& o, int job, size_t before,
                 const std::filesystem::path& part_path) {
  search::JournalHeader header = o.header;
  header.settings = o.settings;
  std::vector<search::JournalRecord> records;
  for (size_t r = 0; r < before; ++r)
    for (size_t k = 0; k < o.rounds[r].groups.size(); ++k) {
      const JobFiles files = group_files(o.journal, job, r, k);
      std::error_code ec;
      if (!std::filesystem::exists(files.part, ec)) continue;
      const search::JournalContents part = search::load_journal(files.part);
      if (part.header) adopt_part_header(header, *part.header);
      for (const auto& rec : part.records)
        if (rec.setting.id == o.settings[job].id && rec.scale == o.rounds[r].groups[k].scale)
          records.push_back(rec);
    }
  // Nothing to hand over (every group failed): no part, so the worker starts as it would have without them
  // (a header from here would say what the orchestrator assumed, not what the workers run on).
  if (records.empty()) return 0;
  std::sort(header.scales.begin(), header.scales.end());
  search::JournalWriter writer(part_path);
  writer.write(header);
  writer.write(records);
  return records.size();
}

// Starts a round's groups together and waits for all of them.
void run_round(const OrchestratorOptions& o, int job, size_t r, ProcessLauncher& launcher, const Clock& clock,
               const std::function<void(const std::string&)>& tell) {
  const std::string round = "round " + std::to_string(r + 1) + "/" + std::to_string(o.rounds.size()) + ": ";
  std::vector<RunningGroup> running;
  for (size_t k = 0; k < o.rounds[r].groups.size(); ++k) {
    const ScaleGroup& g = o.rounds[r].groups[k];
    RunningGroup group{group_text(g), group_files(o.journal, job, r, k), 0, nullptr};
    if (!group_to_run(o, job, g, group.files)) continue;
    std::error_code ec;
    group.log_start =
        std::filesystem::exists(group.files.log, ec) ? std::filesystem::file_size(group.files.log) : 0;
    // A fresh group starts from what the earlier rounds measured (a predicted scale is fitted to it).
    if (!std::filesystem::exists(group.files.part, ec) && r > 0) seed_part(o, job, r, group.files.part);
    group.child = launcher.start(group_spec(o, job, g, group.files));
    tell(round + group.name + ": started (output: " + group.files.log.string() + ")");
    running.push_back(std::move(group));
  }
  // Every running group's progress lines while any of them runs (a round of large scales takes minutes).
  std::vector<std::function<void()>> watches;
  for (const auto& group : running)
    watches.push_back(progress_watch(
        group.files.log, group.log_start, clock, o.progress_interval_s,
        [&tell, &round, name = group.name](const std::string& line) { tell(round + name + ": " + line); }));
  const auto tick = [&watches] {
    for (const auto& watch : watches) watch();
  };
  for (auto& group : running) {
    const Ended end = wait_for_end(*group.child, clock, std::nullopt, tick);
    if (launcher.stop_signal()) continue;
    if (end.status.ok()) {
      tell(round + group.name + ": finished");
    } else {
      const std::string tail = output_tail(group.files.log, group.log_start, 5);
      tell(round + group.name + ": failed (" + end.status.describe() +
           "); the job's own worker measures that scale" + (tail.empty() ? "" : ", output:\n" + tail));
    }
  }
}

}  // namespace

JobFiles group_files(const std::filesystem::path& journal, int job, size_t round, size_t group) {
  const auto dir = search::journal_parts_dir(journal);
  const std::string stem = "job" + std::to_string(job) + ".round" + std::to_string(round + 1) + ".group" +
                           std::to_string(group + 1);
  return {dir / (stem + ".jsonl"), dir / (stem + ".log")};
}

bool run_group_rounds(const OrchestratorOptions& o, int job, ProcessLauncher& launcher, const Clock& clock,
                      const std::function<void(const std::string&)>& tell) {
  for (size_t r = 0; r < o.rounds.size() && !launcher.stop_signal(); ++r)
    run_round(o, job, r, launcher, clock, tell);
  return launcher.stop_signal() == 0;
}

size_t seed_job_part(const OrchestratorOptions& o, int job) {
  return seed_part(o, job, o.rounds.size(), job_files(o.journal, job).part);
}

}  // namespace autotune::calibrate
