#pragma once
// A ProcessLauncher that starts nothing: it records every ProcessSpec it was asked to start and the signals
// sent to each child, and lets the test script how each child behaves over (manual) time: when it exits
// with which status, whether it ignores SIGTERM, what it leaves in its output, and a stop signal arriving
// while it runs. Not thread-safe: the orchestrator calls it from one thread.

#include <csignal>
#include <fstream>
#include <functional>
#include <memory>
#include <vector>

#include "common/clock.hpp"
#include "common/process_launcher.hpp"

namespace autotune::test {

struct ScriptedChild {
  double runs_for_s = 0.0;      // exits this long after it started (on the launcher's clock)...
  ExitStatus ends_with{0, {}};  // ...with this status
  bool ignores_sigterm = false;
  std::string output;                                // appended to the spec's output file at start
  std::function<void(const ProcessSpec&)> at_start;  // e.g. write a journal part like a worker
  int stop_signal_after_start = 0;  // this process "receives" this stop signal once the child started
};

class FakeProcessLauncher final : public ProcessLauncher {
 public:
  FakeProcessLauncher(const Clock& clock, std::vector<ScriptedChild> script)
      : clock_(clock), script_(std::move(script)) {}

  struct Started {
    ProcessSpec spec;
    std::vector<std::pair<int, double>> signals;  // signal, seconds after start
  };
  const std::vector<Started>& started() const { return started_; }

  std::unique_ptr<ChildProcess> start(const ProcessSpec& spec) override {
    const ScriptedChild s = started_.size() < script_.size() ? script_[started_.size()] : ScriptedChild{};
    started_.push_back({spec, {}});
    if (!s.output.empty()) std::ofstream(spec.output, std::ios::app) << s.output;
    if (s.at_start) s.at_start(spec);
    if (s.stop_signal_after_start) stop_ = s.stop_signal_after_start;
    return std::make_unique<Child>(*this, started_.size() - 1, s, clock_.now());
  }
  int stop_signal() const override { return stop_; }

 private:
  class Child final : public ChildProcess {
   public:
    Child(FakeProcessLauncher& l, size_t index, ScriptedChild s, Clock::time_point at)
        : launcher_(l), index_(index), script_(std::move(s)), started_(at) {}
    std::optional<ExitStatus> poll() override {
      if (killed_) return killed_;
      if (launcher_.clock_.seconds_since(started_) >= script_.runs_for_s) return script_.ends_with;
      return std::nullopt;
    }
    void send_signal(int signal) override {
      launcher_.started_[index_].signals.push_back({signal, launcher_.clock_.seconds_since(started_)});
      if (signal == SIGKILL || (signal == SIGTERM && !script_.ignores_sigterm))
        killed_ = ExitStatus{std::nullopt, signal};
    }

   private:
    FakeProcessLauncher& launcher_;
    size_t index_;
    ScriptedChild script_;
    Clock::time_point started_;
    std::optional<ExitStatus> killed_;
  };

  const Clock& clock_;
  std::vector<ScriptedChild> script_;
  std::vector<Started> started_;
  int stop_ = 0;
};

}  // namespace autotune::test
