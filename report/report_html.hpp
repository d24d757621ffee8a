#pragma once
// The calibration report: one self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched) that
// shows, for a journal of measurements and optionally the profile made from it, the cluster and provenance
// (measured, simulated or imported, said prominently), per collective and scale a chart of bus bandwidth
// against message size (one line per candidate, NCCL's default drawn distinctly, rule ranges shaded) and a
// chart of speedup over the default, the rule table with gains and evidence, the candidates that failed, and
// the process-wide settings compared. Readable in any browser and printable.
//
// render_report_html is a pure function; write_report is the one call `tune --report FILE` needs.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profiles/profile.hpp"
#include "search/journal.hpp"

namespace autotune::report {

struct ReportData {
  std::optional<search::JournalHeader> header;
  std::vector<search::JournalRecord> records;
  // The profile whose rules are shaded and tabled; without it the rules are derived from the records with
  // the default thresholds (derive.hpp), and said so.
  std::optional<profiles::Profile> profile;
  std::string probe_summary;  // the probe's text output, shown as is; empty = not shown
  std::string title;          // default: "nccl-autotune report: <cluster>"
};

std::string render_report_html(const ReportData& data);

// Renders and writes atomically (write_file_atomically). Throws what they throw.
void write_report(const std::filesystem::path& path, const search::JournalContents& journal,
                  const std::optional<profiles::Profile>& profile, const std::string& probe_summary = "");

}  // namespace autotune::report
