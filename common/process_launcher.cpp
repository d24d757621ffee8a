#include "common/process_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace autotune {
namespace {

// Children to forward stop signals to, and the first stop signal received. Read by the signal handler, so
// plain sig_atomic_t slots rather than a container.
constexpr size_t kMaxChildren = 16;
volatile sig_atomic_t g_children[kMaxChildren] = {};
volatile sig_atomic_t g_stop_signal = 0;

extern "C" void forward_stop_signal(int sig) {
  if (!g_stop_signal) g_stop_signal = sig;
  for (size_t i = 0; i < kMaxChildren; ++i)
    if (g_children[i] > 0) ::kill(static_cast<pid_t>(g_children[i]), sig);
}

void track(pid_t pid, bool add) {
  for (size_t i = 0; i < kMaxChildren; ++i) {
    if (add && g_children[i] == 0) {
      g_children[i] = pid;
      return;
    }
    if (!add && g_children[i] == pid) {
      g_children[i] = 0;
      return;
    }
  }
}

class PosixChild final : public ChildProcess {
 public:
  explicit PosixChild(pid_t pid) : pid_(pid) {}
  ~PosixChild() override {
    if (!status_) track(pid_, false);
  }
  std::optional<ExitStatus> poll() override {
    if (status_) return status_;
    int raw = 0;
    pid_t got = ::waitpid(pid_, &raw, WNOHANG);
    if (got == 0 || (got < 0 && errno == EINTR)) return std::nullopt;
    if (got < 0) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    track(pid_, false);
    ExitStatus s;
    if (WIFEXITED(raw)) s.code = WEXITSTATUS(raw);
    if (WIFSIGNALED(raw)) s.signal = WTERMSIG(raw);
    status_ = s;
    return status_;
  }
  void send_signal(int signal) override {
    if (!status_) ::kill(pid_, signal);
  }

 private:
  pid_t pid_;
  std::optional<ExitStatus> status_;
};

class PosixLauncher final : public ProcessLauncher {
 public:
  PosixLauncher() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = forward_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~PosixLauncher() override {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  PosixLauncher(const PosixLauncher&) = delete;
  PosixLauncher& operator=(const PosixLauncher&) = delete;

  std::unique_ptr<ChildProcess> start(const ProcessSpec& spec) override;
  int stop_signal() const override { return g_stop_signal; }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

std::unique_ptr<ChildProcess> PosixLauncher::start(const ProcessSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("cannot start a process without a command");
  // Everything the child needs is prepared before fork: the child only calls async-signal-safe functions.
  std::vector<char*> argv;
  for (const auto& w : spec.argv) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (const auto& [k, v] : spec.env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string cannot = "cannot start '" + spec.argv.front() + "': ";
  int out = ::open(spec.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw std::runtime_error("cannot open " + spec.output.string() + ": " + std::strerror(errno));
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
  track(pid, true);
  if (g_stop_signal) ::kill(pid, g_stop_signal);  // arrived between fork and here
  return std::make_unique<PosixChild>(pid);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signal) return std::string("killed by signal ") + ::strsignal(*signal);
  if (code) return "exit status " + std::to_string(*code);
  return "ended abnormally";
}

std::unique_ptr<ProcessLauncher> make_posix_launcher() {
  return std::make_unique<PosixLauncher>();
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

Ended wait_for_end(ChildProcess& child, const Clock& clock, std::optional<double> limit_s,
                   const std::function<void()>& tick) {
  const auto started = clock.now();
  bool termed = false, killed = false;
  std::optional<ExitStatus> status;
  while (!(status = child.poll())) {
    const double waited = clock.seconds_since(started);
    if (limit_s && !termed && waited > *limit_s) {
      child.send_signal(SIGTERM);
      termed = true;
    } else if (limit_s && termed && !killed && waited > *limit_s + 10.0) {
      child.send_signal(SIGKILL);
      killed = true;
    }
    if (tick) tick();
    clock.sleep_for(std::chrono::milliseconds(20));
  }
  return {*status, termed};
}

}  // namespace autotune
