#include "calibrate/progress_report.hpp"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

namespace autotune::calibrate {

std::string progress_line(const TuneProgress& p) {
  nlohmann::json j{
      {"done", p.measurements_done},
      {"planned", p.measurements_planned},
      {"eta_s", p.remaining_s >= 0 ? nlohmann::json(std::round(p.remaining_s)) : nlohmann::json()},
      {"elapsed_s", std::round(p.elapsed_s)},
      {"job", p.job},
      {"jobs_done", p.jobs_done},
      {"jobs_total", p.jobs_total},
      {"measuring", p.measuring}};
  return "progress " + j.dump();
}

std::optional<std::string> last_progress_json(std::string_view text) {
  constexpr std::string_view kPrefix = "progress {";
  size_t at = text.rfind(kPrefix);
  while (at != std::string_view::npos && at > 0 && text[at - 1] != '\n') at = text.rfind(kPrefix, at - 1);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t end = text.find('\n', at);
  if (end == std::string_view::npos) return std::nullopt;  // still being written
  return std::string(text.substr(at + kPrefix.size() - 1, end - at - kPrefix.size() + 1));
}

std::string progress_text(const TuneProgress& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "job %d/%d %s: %llu/%llu measurements, %.0f s elapsed",
                std::min(p.jobs_done + 1, p.jobs_total), p.jobs_total, p.job.c_str(),
                static_cast<unsigned long long>(p.measurements_done),
                static_cast<unsigned long long>(p.measurements_planned), p.elapsed_s);
  std::string out = buf;
  if (p.remaining_s >= 0)
    out += ", ~" + std::to_string(static_cast<long>(std::lround(p.remaining_s))) + " s left";
  if (!p.measuring.empty()) out += ", measuring " + p.measuring;
  return out;
}

ProgressFn progress_reporter(ProgressReporterOptions o) {
  struct Pace {
    std::optional<Clock::time_point> last;
  };
  auto pace = std::make_shared<Pace>();
  const Clock& clock = o.clock ? *o.clock : steady_clock();
  return [o = std::move(o), pace, &clock](const TuneProgress& p) {
    const double interval = o.tty ? o.tty_interval_s : o.line_interval_s;
    const bool due = !pace->last || clock.seconds_since(*pace->last) >= interval;
    if (!due && !p.job_finished) return;
    pace->last = clock.now();
    if (o.tty)
      o.write("\r\033[K" + progress_text(p));
    else
      o.write(progress_line(p) + "\n");
  };
}

}  // namespace autotune::calibrate
