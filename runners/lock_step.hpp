#pragma once
// The steps of one measurement, in lock-step across the job's processes. Each step runs unless an earlier one
// failed, then every process agrees on the worst outcome so far, so that all of them make the same MPI and
// NCCL calls in the same order. A failure inside a step is agreed before anyone leaves: a StepFailure is an
// outcome of the candidate (unsupported, wrong result, timed out...); any other exception means this runner
// cannot go on (a communicator that cannot be created), and after the agreement every process throws
// RunnerBroken with the same reason: the lowest failing rank's, named. A step that throws past the agreement
// would leave the other processes waiting in MPI for ever. A step's body must not itself call the process
// group's collectives: a body that throws before its collective would break the lock-step it is in.
// Not thread-safe; one LockStep per measurement.

#include <functional>
#include <stdexcept>
#include <string>

#include "runners/process_group.hpp"
#include "runners/runner.hpp"

namespace autotune::runners {

// A step went wrong in a way that is the candidate's outcome.
struct StepFailure : std::runtime_error {
  Outcome outcome;
  StepFailure(Outcome o, const std::string& what) : std::runtime_error(what), outcome(o) {}
};

// The runner cannot go on, on every process alike.
struct RunnerBroken : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class LockStep {
 public:
  explicit LockStep(const ProcessGroup& processes) : processes_(processes) {}

  // Runs `body` unless an earlier step failed, then agrees. Returns true while every process is fine; throws
  // RunnerBroken when any process's step threw something other than a StepFailure.
  bool step(const std::function<void()>& body);

  bool ok() const { return severity_ == 0; }
  Outcome outcome() const;  // the agreed worst outcome so far (ok when none failed)
  const std::string& detail() const { return detail_; }  // this process's reason, or "... on another rank"

 private:
  std::string broken_reason(bool broken_here) const;

  const ProcessGroup& processes_;
  int severity_ = 0;
  std::string detail_;
};

}  // namespace autotune::runners
