#pragma once
// The names under a profile's [constants]: NCCL's v5 tuner constants (ncclTunerConstants_v5_t) as tables
// with named indices, e.g. base_latency.ring.simple, hw_latency.net.tree.ll, ll_max_bw.hopper.2. Used to
// read, validate and write a profile's [constants] overrides.

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

// Index names: algorithm and protocol names (vocabulary.hpp), nvlink|pci|net, volta|ampere|hopper|blackwell,
// and node classes "1", "2", "3" (one node, two, more). The index is the array position NCCL uses (node class
// "1" is 0).
std::optional<int> parse_constant_index(ConstantIndex kind, std::string_view text);
std::string constant_index_name(ConstantIndex kind, int index);
// Every accepted name of one index kind, for error messages.
std::string constant_index_names(ConstantIndex kind);

// Valid values: finite, latencies 0..1e6 us, bandwidths 0..1e5 GB/s.
double constant_max(ConstantUnit unit);

}  // namespace autotune::nccl
