#include "tuner/orchestrator.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "tuner/derive.hpp"

extern char** environ;

namespace autotune::tuner {

using runners::ProcessSetting;
using runners::Scale;
namespace {

using Clock = std::chrono::steady_clock;

// The job being waited for, and the first stop signal received while orchestrating.
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_stop_signal = 0;

extern "C" void forward_stop_signal(int sig) {
  if (!g_stop_signal) g_stop_signal = sig;
  if (g_child > 0) ::kill(g_child, sig);
}

// While alive, SIGINT, SIGTERM and SIGHUP reach the running job too, so that a cancelled allocation or a
// Ctrl-C does not leave workers behind; the orchestrator then stops starting jobs and merges what it has.
class StopSignalForwarding {
 public:
  StopSignalForwarding() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = forward_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~StopSignalForwarding() {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopSignalForwarding(const StopSignalForwarding&) = delete;
  StopSignalForwarding& operator=(const StopSignalForwarding&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

std::string base_name(const std::string& word) {
  size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool is_mpirun(const std::string& word) {
  std::string b = base_name(word);
  return b == "mpirun" || b == "mpiexec" || b == "orterun" || b == "prterun";
}

// The last lines of what a job wrote to its log from `from` on (earlier runs' output stays above), for the
// journal and the summary.
std::string output_tail(const std::filesystem::path& log, uintmax_t from, size_t max_lines = 20,
                        size_t max_chars = 4000) {
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

// Starts the command with the setting's variables added to this environment and its output appended to
// `log`; waits for it, at most `limit` seconds when given. Returns "" on exit status 0, otherwise what went
// wrong.
std::string run_job(const std::vector<std::string>& command, const ProcessSetting& setting,
                    const std::filesystem::path& log, std::optional<double> limit) {
  std::vector<char*> argv;
  for (const auto& w : command) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  // Everything the child needs is prepared before fork: the child only calls async-signal-safe functions.
  std::map<std::string, std::string> env = environment_map();
  for (const auto& [k, v] : setting.env) env[k] = v;
  std::vector<std::string> env_text;
  for (const auto& [k, v] : env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw std::runtime_error("cannot open " + log.string() + ": " + std::strerror(errno));
  std::string cannot = "cannot start '" + command.front() + "': ";
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(out);
    throw std::runtime_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execvpe(argv[0], argv.data(), envp.data());
    const char* why = std::strerror(errno);
    [[maybe_unused]] auto a = ::write(2, cannot.data(), cannot.size());
    [[maybe_unused]] auto b = ::write(2, why, std::strlen(why));
    [[maybe_unused]] auto c = ::write(2, "\n", 1);
    ::_exit(127);
  }
  ::close(out);
  g_child = pid;
  if (g_stop_signal) ::kill(pid, g_stop_signal);  // arrived between fork and here
  int status = 0;
  std::string stopped;
  if (limit) {
    // Poll: the job ends on its own, or is stopped at the limit (and killed if it ignores that).
    const auto started = Clock::now();
    auto waited = [&] { return std::chrono::duration<double>(Clock::now() - started).count(); };
    bool termed = false, killed = false;
    for (;;) {
      pid_t got = ::waitpid(pid, &status, WNOHANG);
      if (got == pid) break;
      if (got < 0 && errno != EINTR) {
        g_child = 0;
        throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
      }
      if (!termed && waited() > *limit) {
        ::kill(pid, SIGTERM);
        termed = true;
        stopped = "stopped after " + std::to_string(static_cast<long>(*limit)) +
                  " s, twice its share of the budget plus the start-up allowance; ";
      } else if (termed && !killed && waited() > *limit + 10.0) {
        ::kill(pid, SIGKILL);
        killed = true;
      }
      ::usleep(20000);
    }
  } else {
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) {
        g_child = 0;
        throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
      }
    }
  }
  g_child = 0;
  if (!stopped.empty()) {
    if (WIFSIGNALED(status)) return stopped + "killed by signal " + ::strsignal(WTERMSIG(status));
    return stopped + "exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + ::strsignal(WTERMSIG(status));
  return "ended abnormally";
}

bool part_finished(const JournalContents& part, const std::string& setting_id) {
  return std::any_of(part.job_events.begin(), part.job_events.end(),
                     [&](const JournalJobEvent& e) { return e.job == setting_id && e.status == "finished"; });
}

}  // namespace

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

std::map<std::string, std::string> environment_map() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

int local_gpu_count(const std::map<std::string, std::string>& env) {
  if (auto it = env.find("SLURM_GPUS_ON_NODE"); it != env.end()) {
    int n = std::atoi(it->second.c_str());
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

std::optional<int> launcher_nodes(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    auto value = [&](const std::string& flag) -> std::optional<std::string> {
      if (w == flag && i + 1 < words.size()) return words[i + 1];
      if (flag.size() > 2 && w.rfind(flag + "=", 0) == 0) return w.substr(flag.size() + 1);
      return std::nullopt;
    };
    for (const char* flag : {"-N", "--nodes"})
      if (auto v = value(flag)) {
        int n = std::atoi(v->c_str());
        if (n > 0) return n;
      }
    for (const char* flag : {"-H", "--host"})
      if (auto v = value(flag)) return static_cast<int>(std::count(v->begin(), v->end(), ',')) + 1;
  }
  return std::nullopt;
}

std::vector<std::string> job_command(const Launcher& launcher, const std::filesystem::path& exe,
                                     const std::vector<std::string>& worker_args,
                                     const ProcessSetting& setting) {
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
  std::string stem = journal.filename().string();
  const std::string ext = ".jsonl";
  if (stem.size() > ext.size() && stem.ends_with(ext)) stem.resize(stem.size() - ext.size());
  auto dir = journal.parent_path() / (stem + ".parts");
  return {dir / ("job" + std::to_string(job_id) + ".jsonl"), dir / ("job" + std::to_string(job_id) + ".log")};
}

TuneResult orchestrate(const OrchestratorOptions& o, const JobNoticeFn& notice) {
  if (o.settings.empty()) throw InputError("<arguments>", 0, "expected at least one process-wide setting");
  const int total = static_cast<int>(o.settings.size());
  std::filesystem::create_directories(job_files(o.journal, 0).part.parent_path());
  if (!o.resume) {
    std::filesystem::remove(o.journal);
    for (int i = 0; i < total; ++i) {
      auto files = job_files(o.journal, i);
      std::filesystem::remove(files.part);
      std::filesystem::remove(files.log);
    }
  }
  auto tell = [&](int i, const std::string& what) {
    if (notice) notice({i, total, o.settings[i].id, what});
  };

  const auto start = Clock::now();
  std::vector<std::string> failure(o.settings.size());
  std::vector<bool> ran(o.settings.size(), false);
  std::vector<size_t> records_before(o.settings.size(), 0);
  int stopped_by = 0;
  std::optional<StopSignalForwarding> forwarding(std::in_place);
  for (int i = 0; i < total && !g_stop_signal; ++i) {
    const auto& setting = o.settings[i];
    auto files = job_files(o.journal, i);
    if (std::filesystem::exists(files.part)) {
      JournalContents part = load_journal(files.part);
      if (part_finished(part, setting.id)) {
        tell(i, "already finished (" + files.part.string() + ")");
        continue;
      }
      records_before[i] = part.records.size();
    }
    std::vector<std::string> args = {"tune",           "--worker",         "--job-id", std::to_string(i),
                                     "--journal-part", files.part.string()};
    args.insert(args.end(), o.measure_args.begin(), o.measure_args.end());
    std::optional<double> limit;
    if (o.budget) {
      double left = o.budget->count() - std::chrono::duration<double>(Clock::now() - start).count();
      double share = left / (total - i);
      if (share < 1.0) {
        failure[i] = "not run: the time budget was spent";
        tell(i, "failed: " + failure[i]);
        continue;
      }
      args.insert(args.end(), {"--budget", std::to_string(static_cast<long>(share)) + "s"});
      limit = 2.0 * share + o.job_grace.count();
    }
    auto command = job_command(o.launcher, o.exe, args, setting);
    std::string shown;
    for (const auto& w : command) shown += (shown.empty() ? "" : " ") + w;
    tell(i, "started: " + shown + " (output: " + files.log.string() + ")");
    ran[i] = true;
    std::error_code ec;
    uintmax_t log_start = std::filesystem::exists(files.log, ec) ? std::filesystem::file_size(files.log) : 0;
    std::string why = run_job(command, setting, files.log, limit);
    if (g_stop_signal) {
      // Not the job's failure: its part is interrupted and --resume continues it.
      tell(i, "interrupted (" + why + ")");
      break;
    }
    if (why.empty()) {
      tell(i, "finished");
    } else {
      std::string tail = output_tail(files.log, log_start);
      failure[i] = why + (tail.empty() ? " (no output)" : ", output:\n" + tail);
      tell(i, "failed: " + failure[i]);
    }
  }

  stopped_by = g_stop_signal;
  forwarding.reset();

  // Merge: the parts as they stand (a torn last line is a write cut short and is left out).
  TuneResult result;
  JournalHeader header = o.header;
  header.settings = o.settings;
  if (o.resume && std::filesystem::exists(o.journal)) {
    // The calibration started when its first run did.
    JournalContents before = load_journal(o.journal);
    if (before.header && !before.header->created.empty()) header.created = before.header->created;
  }
  std::vector<JournalRecord> all_records;
  std::vector<JournalJobEvent> events;
  bool from_part = false;
  for (int i = 0; i < total; ++i) {
    const auto& setting = o.settings[i];
    auto files = job_files(o.journal, i);
    JournalContents part;
    if (std::filesystem::exists(files.part)) part = load_journal(files.part);
    if (part.header) {
      if (!from_part && header.scales.empty()) header.scales = part.header->scales;
      for (const auto& s : part.header->scales)
        if (std::find(header.scales.begin(), header.scales.end(), s) == header.scales.end())
          header.scales.push_back(s);
      if (header.nodes == 0) header.nodes = part.header->nodes;
      if (header.gpus_per_node == 0) header.gpus_per_node = part.header->gpus_per_node;
      if (header.gpu_model.empty()) header.gpu_model = part.header->gpu_model;
      if (header.nccl_version.empty()) header.nccl_version = part.header->nccl_version;
      if (header.runner.empty()) header.runner = part.header->runner;
      if (header.fingerprint.empty()) header.fingerprint = part.header->fingerprint;
      from_part = true;
    }
    // Only this job's own lines: a part belongs to one setting.
    std::map<Scale, JobResult> by_scale;
    for (auto& r : part.records) {
      if (r.setting.id != setting.id) continue;
      auto [it, fresh] = by_scale.try_emplace(r.scale, JobResult{setting, r.scale, 0, 0, {}, false, ""});
      (void)fresh;
      all_records.push_back(r);
    }
    // Count what this run measured against what the part held before it.
    size_t seen = 0;
    for (const auto& r : part.records) {
      if (r.setting.id != setting.id) continue;
      auto& job = by_scale.at(r.scale);
      if (ran[i] && seen >= records_before[i])
        ++job.measured;
      else
        ++job.replayed;
      ++seen;
    }
    for (const auto& e : part.job_events)
      if (e.job == setting.id) events.push_back(e);
    if (!failure[i].empty()) {
      events.push_back({setting.id, "failed", failure[i], utc_timestamp_now()});
      if (by_scale.empty()) {
        Scale s = header.scales.empty() ? Scale{} : header.scales.front();
        by_scale.emplace(s, JobResult{setting, s, 0, 0, {}, false, ""});
      }
      for (auto& [s, job] : by_scale) job.failed = true, job.detail = failure[i];
    }
    for (auto& [s, job] : by_scale) {
      result.measured += job.measured;
      result.replayed += job.replayed;
      result.jobs.push_back(std::move(job));
    }
  }
  std::sort(header.scales.begin(), header.scales.end());

  std::filesystem::remove(o.journal);
  {
    JournalWriter writer(o.journal);
    writer.write(header);
    writer.write(all_records);
    for (const auto& e : events) writer.write(e);
  }
  if (stopped_by)
    throw std::runtime_error(std::string("interrupted by ") + ::strsignal(stopped_by) +
                             ": the journal keeps what was measured; --resume continues");
  result.header = header;
  result.plan.strategy = header.strategy;
  result.plan.space.settings = o.settings;
  result.plan.space.scales = header.scales;

  if (all_records.empty()) {
    std::string why;
    for (int i = 0; i < total; ++i)
      if (!failure[i].empty()) why += "; " + o.settings[i].id + ": " + failure[i];
    throw std::runtime_error("no job measured anything" + why);
  }
  result.derivation = derive(all_records, DeriveOptions{o.min_gain});
  result.profile = build_profile(result.derivation, result.header);
  return result;
}

}  // namespace autotune::tuner
