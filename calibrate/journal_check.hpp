#pragma once
// `nccl-autotune check --journal FILE`: what a calibration journal says of the nodes, as check's report, so
// that the stragglers a calibration saw (calibrate/spread_findings.hpp) are reported per node in check's text
// and JSON (and its JSON read back as check's, by the health gate) like the findings of check's own passes.
// Measures nothing; reads one file.

#include <filesystem>

#include "check/check.hpp"

namespace autotune::calibrate {

// Throws InputError naming the file and line for a missing or unreadable journal, any line that does not
// read (read_journal without skipping), and a header that does not say the allocation's nodes and GPUs.
check::CheckReport check_journal(const std::filesystem::path& journal,
                                 const check::Thresholds& thresholds = {});

}  // namespace autotune::calibrate
