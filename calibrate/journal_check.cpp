#include "calibrate/journal_check.hpp"

#include "calibrate/spread_findings.hpp"
#include "common/input_error.hpp"
#include "search/journal.hpp"

namespace autotune::calibrate {

check::CheckReport check_journal(const std::filesystem::path& journal, const check::Thresholds& thresholds) {
  const std::string file = journal.string();
  // Every line must read: a finding drawn from a journal with lines left out could miss the slow group.
  const auto entries = search::read_journal(journal);
  if (entries.empty() || !entries.front().header())
    throw InputError(file, 1, "expected a journal header line first, found none");
  const search::JournalHeader& header = *entries.front().header();
  if (header.nodes < 1 || header.gpus_per_node < 1)
    throw InputError(file, 1,
                     "expected the header's nodes and gpus_per_node (the allocation the groups were "
                     "taken from), found " +
                         std::to_string(header.nodes) + " and " + std::to_string(header.gpus_per_node));
  std::vector<search::JournalRecord> records;
  for (const auto& e : entries)
    if (const auto* r = e.record()) records.push_back(*r);
  const auto spreads = search::group_spreads(records, {header.nodes, header.gpus_per_node});
  const auto found =
      group_findings(spreads, header.nodes, thresholds, "calibration journal: " + header.source);
  check::CheckReport report;
  report.source = header.source;
  report.runner = header.runner;
  report.gpus_per_node = header.gpus_per_node;
  report.journal = file;
  report.journal_groups = static_cast<int>(spreads.size());
  for (int n = 0; n < header.nodes; ++n) {
    check::NodeReport node;
    // The host where the calibration's gate named it, as check names a node it measured.
    const std::string host =
        header.hosts.size() == static_cast<size_t>(header.nodes) ? header.hosts[static_cast<size_t>(n)] : "";
    node.health = {n, host, found[static_cast<size_t>(n)]};
    report.nodes.push_back(std::move(node));
  }
  return report;
}

}  // namespace autotune::calibrate
