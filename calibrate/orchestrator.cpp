#include "calibrate/orchestrator.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "calibrate/group_jobs.hpp"
#include "calibrate/progress_report.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/process_launcher.hpp"
#include "common/text.hpp"
#include "common/utc_time.hpp"
#include "profiles/profile.hpp"
#include "search/derive.hpp"

namespace autotune::calibrate {

using runners::ProcessSetting;
using runners::Scale;

namespace {

std::string base_name(const std::string& word) {
  size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool is_mpirun(const std::string& word) {
  std::string b = base_name(word);
  return b == "mpirun" || b == "mpiexec" || b == "orterun" || b == "prterun";
}

}  // namespace

bool part_finished(const search::JournalContents& part, const std::string& setting_id) {
  return std::any_of(part.job_events.begin(), part.job_events.end(), [&](const search::JournalJobEvent& e) {
    return e.job == setting_id && e.status == "finished";
  });
}

std::string output_tail(const std::filesystem::path& log, uintmax_t from, size_t max_lines,
                        size_t max_chars) {
  std::error_code ec;
  if (!std::filesystem::exists(log, ec)) return "";
  std::string text = read_file(log);
  text.erase(0, std::min<size_t>(text.size(), from));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t start = text.size();
  for (size_t lines = 0; start > 0 && lines < max_lines; ++lines) {
    size_t nl = text.rfind('\n', start - 1);
    start = nl == std::string::npos ? 0 : nl;
    if (nl == std::string::npos) break;
  }
  if (start < text.size() && text[start] == '\n') ++start;
  std::string tail = text.substr(start);
  if (tail.size() > max_chars) tail = "..." + tail.substr(tail.size() - max_chars);
  return tail;
}

std::string run_job(ProcessLauncher& launcher, const Clock& clock, const ProcessSpec& spec,
                    std::optional<double> limit, const std::function<void()>& tick) {
  auto child = launcher.start(spec);
  const Ended end = wait_for_end(*child, clock, limit, tick);
  std::string stopped;
  if (end.stopped)
    stopped = "stopped after " + std::to_string(static_cast<long>(*limit)) +
              " s, twice its share of the budget plus the start-up allowance; ";
  if (end.status.ok() && !end.stopped) return "";
  return stopped + end.status.describe();
}

std::function<void()> progress_watch(const std::filesystem::path& log, uintmax_t from, const Clock& clock,
                                     double interval_s, std::function<void(const std::string&)> tell) {
  struct Seen {
    Clock::time_point last;
    std::string json;
  };
  auto seen = std::make_shared<Seen>(Seen{clock.now(), ""});
  return [=, &clock, tell = std::move(tell)] {
    if (clock.seconds_since(seen->last) < interval_s) return;
    seen->last = clock.now();
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(log, ec);
    if (ec || size <= from) return;
    // The newest lines only: a job's log also holds NCCL's own output.
    const uintmax_t start = std::max(from, size > 65536 ? size - 65536 : 0);
    std::ifstream in(log, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(start));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto json = last_progress_json(text);
    if (!json || *json == seen->json) return;
    seen->json = *json;
    tell("progress " + *json);
  };
}

std::vector<std::string> split_shell_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word)), word.clear(), in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos)
        throw InputError("<arguments>", 0,
                         "--launcher: expected a closing ' for the quote at column " + std::to_string(i + 1) +
                             ", found the end of '" + std::string(text) + "'");
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        // Inside double quotes a backslash escapes only what the shell lets it escape there.
        if (text[j] == '\\' && j + 1 < text.size() && std::strchr("\"\\$`\n", text[j + 1])) ++j;
        word += text[j];
      }
      if (j >= text.size())
        throw InputError("<arguments>", 0,
                         "--launcher: expected a closing \" for the quote at column " +
                             std::to_string(i + 1) + ", found the end of '" + std::string(text) + "'");
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= text.size())
        throw InputError("<arguments>", 0,
                         "--launcher: expected a character after the trailing backslash, found the end of '" +
                             std::string(text) + "'");
      word += text[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

namespace {

// --gpus-per-node as Slurm exports it: "[type:]count" items, comma-separated ("2", "gpu:2", "a100:2,v100:1");
// 0 when it does not parse.
int gpus_per_node_request(const std::string& text) {
  int total = 0;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = std::min(text.find(',', begin), text.size());
    std::string item = text.substr(begin, end - begin);
    std::string count = item.substr(item.rfind(':') == std::string::npos ? 0 : item.rfind(':') + 1);
    if (count.empty() ||
        !std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return 0;
    total += std::atoi(count.c_str());
    begin = end + 1;
  }
  return total;
}

}  // namespace

int local_gpu_count(const std::map<std::string, std::string>& env) {
  if (auto it = env.find("SLURM_GPUS_ON_NODE"); it != env.end()) {
    int n = std::atoi(it->second.c_str());
    if (n > 0) return n;
  }
  // salloc's shell (on the login node, say) has only the request, not SLURM_GPUS_ON_NODE.
  if (auto it = env.find("SLURM_GPUS_PER_NODE"); it != env.end()) {
    int n = gpus_per_node_request(it->second);
    if (n > 0) return n;
  }
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
        std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      ++n;
  }
  return std::max(1, n);
}

Launcher choose_launcher(const std::string& given, bool simulate, int gpus_per_node,
                         const std::map<std::string, std::string>& env) {
  Launcher l;
  if (!given.empty()) {
    l.words = split_shell_words(given);
    if (l.words.empty())
      throw InputError("<arguments>", 0, "--launcher: expected a command such as \"srun -N 2\", found none");
    l.origin = "--launcher";
    return l;
  }
  auto job = env.find("SLURM_JOB_ID");
  auto nodes = env.find("SLURM_NNODES");
  if (!simulate && job != env.end() && nodes != env.end()) {
    l.words = {"srun", "--ntasks-per-node", std::to_string(std::max(1, gpus_per_node)), "-N", nodes->second};
    l.origin = "Slurm allocation " + job->second + " detected";
    return l;
  }
  l.origin = simulate ? "in-process (simulator)" : "local: one worker process per job";
  return l;
}

std::string describe(const Launcher& launcher) {
  std::string out = launcher.origin;
  for (const auto& w : launcher.words) out += " " + w;
  return out;
}

namespace {

// What `flag` at words[i] gives: the next word, or for a long flag written "--flag=VALUE" what follows "=".
std::optional<std::string> launcher_flag_value(const std::vector<std::string>& words, size_t i,
                                               const std::string& flag) {
  const std::string& w = words[i];
  if (w == flag && i + 1 < words.size()) return words[i + 1];
  if (flag.size() > 2 && w.rfind(flag + "=", 0) == 0) return w.substr(flag.size() + 1);
  return std::nullopt;
}

}  // namespace

std::optional<int> launcher_nodes(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    for (const char* flag : {"-N", "--nodes"})
      if (auto v = launcher_flag_value(words, i, flag)) {
        int n = std::atoi(v->c_str());
        if (n > 0) return n;
      }
    for (const char* flag : {"-H", "--host"})
      if (auto v = launcher_flag_value(words, i, flag))
        return static_cast<int>(std::count(v->begin(), v->end(), ',')) + 1;
  }
  return std::nullopt;
}

std::optional<int> launcher_ranks_per_node(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (auto v = launcher_flag_value(words, i, "--ntasks-per-node")) return parse_positive(*v);
    for (const char* flag : {"-H", "--host"})
      if (auto v = launcher_flag_value(words, i, flag)) {
        const std::string first = v->substr(0, v->find(','));
        const size_t colon = first.find(':');
        if (colon != std::string::npos) return parse_positive(first.substr(colon + 1));
      }
  }
  return std::nullopt;
}

std::vector<std::string> job_command(const Launcher& launcher, const std::filesystem::path& exe,
                                     const std::vector<std::string>& worker_args,
                                     const runners::ProcessSetting& setting) {
  std::vector<std::string> cmd;
  for (size_t i = 0; i < launcher.words.size(); ++i) {
    cmd.push_back(launcher.words[i]);
    // mpirun forwards only the variables it is told to.
    if (i == 0 && is_mpirun(launcher.words[0]))
      for (const auto& [name, value] : setting.env) cmd.insert(cmd.end(), {"-x", name});
  }
  cmd.push_back(exe.string());
  cmd.insert(cmd.end(), worker_args.begin(), worker_args.end());
  return cmd;
}

JobFiles job_files(const std::filesystem::path& journal, int job_id) {
  const auto dir = search::journal_parts_dir(journal);
  return {dir / ("job" + std::to_string(job_id) + ".jsonl"), dir / ("job" + std::to_string(job_id) + ".log")};
}

std::vector<std::string> worker_arguments(const OrchestratorOptions& o, int job,
                                          const std::filesystem::path& part, std::optional<double> share) {
  std::vector<std::string> args = {"tune",           "--worker",   "--job-id", std::to_string(job),
                                   "--journal-part", part.string()};
  args.insert(args.end(), o.measure_args.begin(), o.measure_args.end());
  if (share) args.insert(args.end(), {"--budget", std::to_string(static_cast<long>(*share)) + "s"});
  return args;
}

void adopt_part_header(search::JournalHeader& header, const search::JournalHeader& part) {
  for (const auto& s : part.scales)
    if (std::find(header.scales.begin(), header.scales.end(), s) == header.scales.end())
      header.scales.push_back(s);
  if (header.nodes == 0) header.nodes = part.nodes;
  if (header.gpus_per_node == 0) header.gpus_per_node = part.gpus_per_node;
  if (header.nics_per_node == 0) header.nics_per_node = part.nics_per_node;
  if (header.gpu_model.empty()) header.gpu_model = part.gpu_model;
  if (header.nccl_version.empty()) header.nccl_version = part.nccl_version;
  if (header.runner.empty()) header.runner = part.runner;
  if (!header.layout) header.layout = part.layout;
  if (header.fingerprint.empty()) {
    header.fingerprint = part.fingerprint;
    header.fingerprint_facts = part.fingerprint_facts;
  }
  // The orchestrator measures nothing itself: a part made on the stand-in (or by the simulator) says what the
  // calibration really is, and no profile derived from it may say "measured".
  if (auto source = profiles::parse_source(part.source); source && profiles::from_model(*source))
    header.source = part.source;
}

namespace {

// What running the jobs left for the merge.
struct JobsRun {
  std::vector<std::string> failure;    // per job: why it failed ("" = it did not)
  std::vector<bool> ran;               // per job: started in this run
  std::vector<size_t> records_before;  // per job: records its part held before this run
  int stopped_by = 0;                  // the stop signal that ended the run early, or 0
};

JobsRun run_jobs(const OrchestratorOptions& o, ProcessLauncher& launcher, const Clock& clock,
                 const std::function<void(int, const std::string&)>& tell) {
  const int total = static_cast<int>(o.settings.size());
  JobsRun run{std::vector<std::string>(total), std::vector<bool>(total, false), std::vector<size_t>(total, 0),
              0};
  const auto start = clock.now();
  for (int i = 0; i < total && !launcher.stop_signal(); ++i) {
    const auto& setting = o.settings[i];
    auto files = job_files(o.journal, i);
    if (std::filesystem::exists(files.part)) {
      search::JournalContents part = search::load_journal(files.part);
      if (part_finished(part, setting.id)) {
        tell(i, "already finished (" + files.part.string() + ")");
        continue;
      }
      run.records_before[i] = part.records.size();
    } else if (!o.rounds.empty()) {
      run.ran[i] = true;
      if (!run_group_rounds(o, i, launcher, clock, [&](const std::string& what) { tell(i, what); })) break;
      tell(i, std::to_string(seed_job_part(o, i)) +
                  " measurement(s) of the concurrent rounds handed to the job");
    }
    std::optional<double> share, limit;
    if (o.budget) {
      // NCCL's defaults are every rule's baseline: their job runs whatever is left and may use all of it;
      // the others share what it leaves.
      const double left = o.budget->count() - clock.seconds_since(start);
      share = setting.is_default() ? std::max(1.0, left) : left / (total - i);
      if (*share < 1.0) {
        run.failure[i] = "not run: the time budget was spent";
        tell(i, "failed: " + run.failure[i]);
        continue;
      }
      limit = 2.0 * *share + o.job_grace.count();
    }
    ProcessSpec spec{job_command(o.launcher, o.exe, worker_arguments(o, i, files.part, share), setting),
                     environment_map(), files.log};
    for (const auto& [k, v] : setting.env) spec.env[k] = v;
    std::string shown;
    for (const auto& w : spec.argv) shown += (shown.empty() ? "" : " ") + w;
    tell(i, "started: " + shown + " (output: " + files.log.string() + ")");
    run.ran[i] = true;
    std::error_code ec;
    uintmax_t log_start = std::filesystem::exists(files.log, ec) ? std::filesystem::file_size(files.log) : 0;
    std::string why = run_job(launcher, clock, spec, limit,
                              progress_watch(files.log, log_start, clock, o.progress_interval_s,
                                             [&](const std::string& line) { tell(i, line); }));
    if (launcher.stop_signal()) {
      // Not the job's failure: its part is interrupted and --resume continues it.
      tell(i, "interrupted (" + why + ")");
      break;
    }
    if (why.empty()) {
      tell(i, "finished");
    } else {
      std::string tail = output_tail(files.log, log_start);
      run.failure[i] = why + (tail.empty() ? " (no output)" : ", output:\n" + tail);
      tell(i, "failed: " + run.failure[i]);
    }
  }
  run.stopped_by = launcher.stop_signal();
  return run;
}

// One job's lines of its part, counted as measured in this run or replayed, and its failure if any.
std::vector<JobResult> job_results(const runners::ProcessSetting& setting,
                                   const search::JournalContents& part, const JobsRun& run, int i,
                                   const search::JournalHeader& header,
                                   std::vector<search::JournalRecord>& records) {
  std::map<runners::Scale, JobResult> by_scale;
  size_t seen = 0;
  for (const auto& r : part.records) {
    if (r.setting.id != setting.id) continue;  // a part belongs to one setting
    auto it = by_scale.try_emplace(r.scale, JobResult{setting, r.scale, 0, 0, 0, {}, false, ""}).first;
    (run.ran[i] && seen >= run.records_before[i] ? it->second.measured : it->second.replayed)++;
    ++seen;
    records.push_back(r);
  }
  if (!run.failure[i].empty()) {
    if (by_scale.empty()) {
      runners::Scale s = header.scales.empty() ? runners::Scale{} : header.scales.front();
      by_scale.emplace(s, JobResult{setting, s, 0, 0, 0, {}, false, ""});
    }
    for (auto& [s, job] : by_scale) job.failed = true, job.detail = run.failure[i];
  }
  std::vector<JobResult> out;
  for (auto& [s, job] : by_scale) out.push_back(std::move(job));
  return out;
}

// The first job's one-node shapes count for every job whose setting cannot change them (its worker left
// them out): journaled under that setting too, saying where they were measured. Not for a job that failed
// (its setting could not run), nor in a run cut short (the journal then holds what the parts hold).
void share_one_node_shapes(const OrchestratorOptions& o, const JobsRun& run,
                           const search::JournalHeader& header, std::vector<search::JournalRecord>& records,
                           TuneResult& result) {
  search::SearchSpace space;
  space.settings = o.settings;
  for (size_t i = 0; i < o.settings.size(); ++i)
    for (const auto& scale : header.scales) {
      const auto& setting = o.settings[i];
      if (run.stopped_by || !run.failure[i].empty() || measures_itself(space, setting, scale)) continue;
      const bool own = std::any_of(records.begin(), records.end(), [&](const auto& r) {
        return r.setting.id == setting.id && r.scale == scale;
      });
      if (own) continue;  // measured by its own job after all (nothing else to measure there)
      auto taken = shared_records(records, o.settings.front(), setting, scale);
      if (taken.empty()) continue;
      result.shared += taken.size();
      result.jobs.push_back(JobResult{setting, scale, 0, 0, taken.size(), {}, false, ""});
      records.insert(records.end(), taken.begin(), taken.end());
    }
}

// Merges the parts as they stand (a torn last line is a write cut short and is left out) into the
// calibration's journal, and fills the result's jobs and counts.
std::vector<search::JournalRecord> merge_parts(const OrchestratorOptions& o, const JobsRun& run,
                                               TuneResult& result) {
  search::JournalHeader header = o.header;
  header.settings = o.settings;
  if (o.resume && std::filesystem::exists(o.journal)) {
    // The calibration started when its first run did.
    search::JournalContents before = search::load_journal(o.journal);
    if (before.header && !before.header->created.empty()) header.created = before.header->created;
  }
  std::vector<search::JournalRecord> records;
  std::vector<search::JournalJobEvent> events;
  for (int i = 0; i < static_cast<int>(o.settings.size()); ++i) {
    const auto& setting = o.settings[i];
    auto files = job_files(o.journal, i);
    search::JournalContents part;
    if (std::filesystem::exists(files.part)) part = search::load_journal(files.part);
    if (o.say)
      for (const auto& line : part.skipped) o.say(line);
    if (part.header) adopt_part_header(header, *part.header);
    for (auto& job : job_results(setting, part, run, i, header, records)) {
      result.measured += job.measured;
      result.replayed += job.replayed;
      result.jobs.push_back(std::move(job));
    }
    for (const auto& e : part.job_events)
      if (e.job == setting.id) events.push_back(e);
    if (!run.failure[i].empty())
      events.push_back({setting.id, "failed", run.failure[i], utc_timestamp_now()});
  }
  // A part seeded by concurrent groups keeps their header: the scales its own worker added are its records'.
  for (const auto& r : records)
    if (std::find(header.scales.begin(), header.scales.end(), r.scale) == header.scales.end())
      header.scales.push_back(r.scale);
  std::sort(header.scales.begin(), header.scales.end());
  share_one_node_shapes(o, run, header, records, result);
  std::filesystem::remove(o.journal);
  search::JournalWriter writer(o.journal);
  writer.write(header);
  writer.write(records);
  for (const auto& e : events) writer.write(e);
  result.header = header;
  return records;
}

// The collectives calibrated on `scale`: those the layout's kinds of that shape run (a shape whose kinds only
// send/recv or all-to-all has none to decide), else every one of the calibration's.
std::vector<nccl::Collective> collectives_of_shape(const search::JournalHeader& h,
                                                   const runners::Scale& scale) {
  if (!h.layout) return h.collectives;
  std::vector<nccl::Collective> out;
  for (const auto& g : profiles::groups_of_shape(*h.layout, scale.nodes, scale.ranks))
    for (auto op : g.operations)
      if (auto c = nccl::as_collective(op);
          c && std::find(h.collectives.begin(), h.collectives.end(), *c) != h.collectives.end() &&
          std::find(out.begin(), out.end(), *c) == out.end())
        out.push_back(*c);
  return out;
}

}  // namespace

TuneResult orchestrate(const OrchestratorOptions& o, const JobNoticeFn& notice) {
  if (o.settings.empty()) throw InputError("<arguments>", 0, "expected at least one process-wide setting");
  const int total = static_cast<int>(o.settings.size());
  if (!o.resume)
    if (auto kept = search::keep_previous_journal(o.journal); kept && o.say) o.say(kept->describe());
  std::filesystem::create_directories(search::journal_parts_dir(o.journal));
  auto tell = [&](int i, const std::string& what) {
    if (notice) notice({i, total, o.settings[i].id, what});
  };
  JobsRun run;
  {
    std::unique_ptr<ProcessLauncher> own = o.processes ? nullptr : make_posix_launcher();
    run = run_jobs(o, o.processes ? *o.processes : *own, o.clock ? *o.clock : steady_clock(), tell);
  }
  TuneResult result;
  std::vector<search::JournalRecord> records = merge_parts(o, run, result);
  if (run.stopped_by)
    throw std::runtime_error(std::string("interrupted by ") + ::strsignal(run.stopped_by) +
                             ": the journal keeps what was measured; --resume continues");
  result.plan.strategy = result.header.strategy;
  result.plan.space.settings = o.settings;
  result.plan.space.scales = result.header.scales;
  if (records.empty()) {
    std::string why;
    for (int i = 0; i < total; ++i)
      if (!run.failure[i].empty()) why += "; " + o.settings[i].id + ": " + run.failure[i];
    throw std::runtime_error("no job measured anything" + why);
  }
  if (o.budget) {
    std::vector<std::string> left;
    for (const auto& scale : result.header.scales) {
      const auto collectives = collectives_of_shape(result.header, scale);
      const auto here = search::undecided(records, collectives, std::span<const runners::Scale>(&scale, 1));
      left.insert(left.end(), here.begin(), here.end());
    }
    if (!left.empty()) throw std::runtime_error(search::budget_undecided_message(left, records.size()));
  }
  conclude(result, records, search::DeriveOptions{o.min_gain});
  return result;
}

}  // namespace autotune::calibrate
