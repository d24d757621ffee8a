#pragma once
// Progress inside a calibration job, for the two readers it has: a person at a terminal (one line rewritten
// in place, at most every `tty_interval_s`) and a batch log or the orchestrator reading a worker's log (a
// `progress {...}` JSON line every `line_interval_s`, and at every job's end). The pace is kept on the clock
// seam, so a test drives it without waiting. Not thread-safe (progress is reported on the calibrating
// thread).

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "calibrate/tune.hpp"
#include "common/clock.hpp"

namespace autotune::calibrate {

// `progress {"done":..,"planned":..,"eta_s":..,"elapsed_s":..,"job":"..","jobs_done":..,"jobs_total":..,
// "measuring":".."}` (eta_s null when unknown): one line, no newline.
std::string progress_line(const TuneProgress& p);

// The last progress line in `text` (a worker's log), without its "progress " prefix: the JSON; nullopt when
// there is none.
std::optional<std::string> last_progress_json(std::string_view text);

// For people: "job 2/4 cross_nic=1 at 2x8 (16 ranks): 812/1632 measurements, 12 s elapsed, ~40 s left,
// measuring allreduce 1 MiB ring/simple".
std::string progress_text(const TuneProgress& p);

struct ProgressReporterOptions {
  bool tty = false;
  double tty_interval_s = 1.0;
  double line_interval_s = 10.0;
  const Clock* clock = nullptr;                   // null = the steady clock
  std::function<void(const std::string&)> write;  // raw text to stderr ("\r\033[K..." on a terminal)
};

// The ProgressFn that paces and writes as above.
ProgressFn progress_reporter(ProgressReporterOptions options);

}  // namespace autotune::calibrate
