#pragma once
// Stragglers a calibration saw: where a shape was measured as several communicators at once (a
// --parallelism layout's groups), each group's time against the shape's median group, over every
// measurement of the shape, so that a group consistently slower (a slow node, GPU or NIC) is named after the
// calibration as `check` names a slow device: a `calibration_group_slow` finding on each node of the group,
// judged with check's thresholds. What `tune` says of the groups and `check --journal` reports. Pure
// functions: thread-safe.

#include <span>
#include <string>
#include <vector>

#include "check/baseline_findings.hpp"
#include "runners/process_setting.hpp"
#include "search/journal.hpp"
#include "topology/health.hpp"

namespace autotune::calibrate {

// The allocation the shapes took their groups from (the journal header's nodes and gpus_per_node).
struct GroupGeometry {
  int nodes = 0;
  int gpus_per_node = 0;
};

// One group of a multi-group shape, over the shape's measurements.
struct GroupSpread {
  runners::Scale shape;
  int group = 0;
  std::vector<int> nodes;  // the allocation's nodes it covers, ascending
  std::vector<int> gpus;   // the node-local GPUs (ranks) it takes on each, ascending; empty: all of them
  // Bus bandwidth as a fraction of the median group's: the median over the shape's measurements of (the
  // measurement's median group time / this group's time).
  double ratio = 1.0;
  int measurements = 0;
  // "2x8 group 3 (nodes 6-7): 0.78 of the median group over 40 measurements", "4x1 group 1 (nodes 0-3,
  // GPU 1): ..."
  std::string describe() const;
};

// Per group of every shape whose records hold two or more group times, in the order the shapes first
// appear, each shape's groups in runners/group_layout.hpp's order. Records that are not ok, are below
// kSpreadMinBytes, or whose group count does not match the geometry are left out; a shape with none left
// gives nothing.
inline constexpr uint64_t kSpreadMinBytes = uint64_t{1} << 20;
std::vector<GroupSpread> group_spreads(std::span<const search::JournalRecord> records,
                                       const GroupGeometry& geometry);

// Per node of the geometry (nodes entries), a finding for every group on it whose ratio is below
// thresholds.warn. Below thresholds.block it blocks where the group can be blamed on the node: a group of one
// node, or one across nodes where a slow group of another shape holds the node too (the straggler is what
// the two share); on the other nodes of a group across nodes it warns. `source` goes into each finding
// ("calibration journal FILE").
std::vector<std::vector<topology::HealthFinding>> group_findings(std::span<const GroupSpread> spreads,
                                                                 int nodes,
                                                                 const check::Thresholds& thresholds,
                                                                 const std::string& source);

// The groups of a calibration slow enough for a finding under check's default thresholds, described with
// their severity, for tune's summary: "2x8 group 3 (nodes 6-7): 0.78 of the median group over 40
// measurements (block)". Empty when none is.
std::vector<std::string> slow_groups(std::span<const search::JournalRecord> records,
                                     const search::JournalHeader& header);

}  // namespace autotune::calibrate
