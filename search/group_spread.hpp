#pragma once
// Each group of a shape measured as several communicators at once (a --parallelism layout's groups, the
// NCCL runner's and the simulator's Measurement::group_times_us, journaled) against the shape's median group
// over every measurement of the shape: a group consistently slower than the others holds a slow node, GPU or
// NIC. The figures alone; calibrate/spread_findings.hpp judges them as `check` judges a device, and the
// report draws them. Pure functions: thread-safe.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runners/process_setting.hpp"
#include "search/journal.hpp"

namespace autotune::search {

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
  // "nodes 0-3", "node 2", or with the GPUs when the group takes part of each node: "nodes 0-3, GPU 1".
  std::string place() const;
  // "2x8 group 3 (nodes 6-7): 0.78 of the median group over 40 measurements"
  std::string describe() const;
};

// Per group of every shape whose records hold two or more group times, in the order the shapes first
// appear, each shape's groups in runners/group_layout.hpp's order. Records that are not ok, are below
// kSpreadMinBytes, or whose group count does not match the geometry are left out; a shape with none left
// gives nothing.
inline constexpr uint64_t kSpreadMinBytes = uint64_t{1} << 20;
std::vector<GroupSpread> group_spreads(std::span<const JournalRecord> records, const GroupGeometry& geometry);

}  // namespace autotune::search
