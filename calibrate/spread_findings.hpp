#pragma once
// Stragglers a calibration saw, judged as `check` judges a device: each group of a shape measured several
// at once (search/group_spread.hpp) against check's thresholds, a `calibration_group_slow` finding on the
// nodes of a group below them. What `tune` says of the groups and `check --journal` reports. Pure
// functions: thread-safe.

#include <span>
#include <string>
#include <vector>

#include "check/baseline_findings.hpp"
#include "search/group_spread.hpp"
#include "search/journal.hpp"
#include "topology/health.hpp"

namespace autotune::calibrate {

// Per node of the geometry (nodes entries), a finding for every group on it whose ratio is below
// thresholds.warn. Below thresholds.block it blocks where the group can be blamed on the node: a group of one
// node, or one across nodes where a slow group of another shape holds the node too (the straggler is what
// the two share); on the other nodes of a group across nodes it warns. `source` goes into each finding
// ("calibration journal FILE").
std::vector<std::vector<topology::HealthFinding>> group_findings(std::span<const search::GroupSpread> spreads,
                                                                 int nodes,
                                                                 const check::Thresholds& thresholds,
                                                                 const std::string& source);

// The groups of a calibration slow enough for a finding under check's default thresholds, described with
// their severity, for tune's summary: "2x8 group 3 (nodes 6-7): 0.78 of the median group over 40
// measurements (block)". Empty when none is.
std::vector<std::string> slow_groups(std::span<const search::JournalRecord> records,
                                     const search::JournalHeader& header);

}  // namespace autotune::calibrate
