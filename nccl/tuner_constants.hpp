#pragma once
// The names under a profile's [constants]: NCCL's tuner constants (ncclTunerConstants_v5_t, and v7's with a
// Rubin row) as tables with named indices, e.g. base_latency.ring.simple, hw_latency.net.tree.ll,
// ll_max_bw.hopper.2, per_ch_max_tree_bw.rubin.1. Used to read, validate and write a
// profile's [constants] overrides, and by the plugin to find where each one lies in the struct NCCL passes.
// Thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl/vocabulary.hpp"

namespace autotune::nccl {

enum class ConstantIndex { algorithm, protocol, link, arch, node_class };
enum class ConstantUnit { microseconds, gbps };

struct ConstantTable {
  std::string_view name;
  std::vector<ConstantIndex> indices;
  ConstantUnit unit;
};

// In the order NCCL's struct lays them out; a profile writes its overrides in this order.
const std::vector<ConstantTable>& constant_tables();
const ConstantTable* find_constant_table(std::string_view name);
// Position of a table in constant_tables() (for sorting); -1 if unknown.
int constant_table_order(std::string_view name);

// Index names: algorithm and protocol names (vocabulary.hpp), nvlink|pci|net,
// volta|ampere|hopper|blackwell|rubin, and node classes "1", "2", "3" (one node, two, more). The index is the
// array position NCCL uses (node class "1" is 0; rubin, 4, exists only in the v7 struct).
std::optional<int> parse_constant_index(ConstantIndex kind, std::string_view text);
std::string constant_index_name(ConstantIndex kind, int index);
// Every accepted name of one index kind, for error messages.
std::string constant_index_names(ConstantIndex kind);

// Valid values: finite, latencies 0..1e6 us, bandwidths 0..1e5 GB/s.
double constant_max(ConstantUnit unit);

// The compute-capability rows of the bandwidth tables in the struct of each ABI version: 4 in
// ncclTunerConstants_v5_t (v5, v6), 5 in ncclTunerConstants_v7_t (v7).
inline constexpr int kCompcapRowsV5 = 4;
inline constexpr int kCompcapRowsV7 = 5;
inline constexpr int kRubinRow = 4;

// The byte offset of one entry (a table of constant_tables() and its indices, in that table's order) inside
// the constants struct that has `compcap_rows` rows; nullopt when that struct has no such entry (a rubin row
// in the v5 struct) or the table or an index is unknown or out of range.
std::optional<size_t> constant_offset(std::string_view table, const std::vector<int>& index,
                                      int compcap_rows);

// "ll_max_bw.hopper.2": the name a profile gives one entry.
std::string constant_entry_name(std::string_view table, const std::vector<int>& index);

}  // namespace autotune::nccl
