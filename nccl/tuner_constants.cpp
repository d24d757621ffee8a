#include "nccl/tuner_constants.hpp"

#include <array>

#include "common/name_table.hpp"
#include "nccl/tuner_abi.h"

namespace autotune::nccl {
namespace {

constexpr std::array<std::string_view, 3> kLinks = {"nvlink", "pci", "net"};
constexpr std::array<std::string_view, 5> kArchs = {"volta", "ampere", "hopper", "blackwell", "rubin"};

// Where each table of constant_tables() (same order) starts in the v5 and the v7 struct.
struct TableOffsets {
  size_t v5, v7;
};
constexpr std::array<TableOffsets, 7> kTableOffsets = {{
    {offsetof(ncclTunerConstants_v5_t, baseLatencies), offsetof(ncclTunerConstants_v7_t, baseLatencies)},
    {offsetof(ncclTunerConstants_v5_t, hwLatencies), offsetof(ncclTunerConstants_v7_t, hwLatencies)},
    {offsetof(ncclTunerConstants_v5_t, llMaxBws), offsetof(ncclTunerConstants_v7_t, llMaxBws)},
    {offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws),
     offsetof(ncclTunerConstants_v7_t, perChMaxRingLL128Bws)},
    {offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws),
     offsetof(ncclTunerConstants_v7_t, perChMaxTreeLL128Bws)},
    {offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws), offsetof(ncclTunerConstants_v7_t, perChMaxTreeBws)},
    {offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws),
     offsetof(ncclTunerConstants_v7_t, perChMaxNVLSTreeBws)},
}};

int index_count(ConstantIndex kind, int compcap_rows) {
  switch (kind) {
    case ConstantIndex::algorithm:
      return NCCL_NUM_ALGORITHMS;
    case ConstantIndex::protocol:
      return NCCL_NUM_PROTOCOLS;
    case ConstantIndex::link:
      return NCCL_NUM_HW_LINKS;
    case ConstantIndex::arch:
      return compcap_rows;
    case ConstantIndex::node_class:
      return NCCL_NUM_TUNING_SCALES;
  }
  return 0;
}
constexpr std::array<std::string_view, 3> kNodeClasses = {"1", "2", "3"};

}  // namespace

const std::vector<ConstantTable>& constant_tables() {
  using I = ConstantIndex;
  static const std::vector<ConstantTable> tables = {
      {"base_latency", {I::algorithm, I::protocol}, ConstantUnit::microseconds},
      {"hw_latency", {I::link, I::algorithm, I::protocol}, ConstantUnit::microseconds},
      {"ll_max_bw", {I::arch, I::node_class}, ConstantUnit::gbps},
      {"per_ch_max_ring_ll128_bw", {I::arch, I::node_class}, ConstantUnit::gbps},
      {"per_ch_max_tree_ll128_bw", {I::arch, I::node_class}, ConstantUnit::gbps},
      {"per_ch_max_tree_bw", {I::arch, I::node_class}, ConstantUnit::gbps},
      {"per_ch_max_nvls_tree_bw", {I::arch, I::node_class}, ConstantUnit::gbps},
  };
  return tables;
}

const ConstantTable* find_constant_table(std::string_view name) {
  for (const auto& t : constant_tables())
    if (t.name == name) return &t;
  return nullptr;
}

int constant_table_order(std::string_view name) {
  const auto& tables = constant_tables();
  for (size_t i = 0; i < tables.size(); ++i)
    if (tables[i].name == name) return static_cast<int>(i);
  return -1;
}

std::optional<int> parse_constant_index(ConstantIndex kind, std::string_view text) {
  switch (kind) {
    case ConstantIndex::algorithm:
      if (auto a = parse_algorithm(text)) return static_cast<int>(*a);
      return std::nullopt;
    case ConstantIndex::protocol:
      if (auto p = parse_protocol(text)) return static_cast<int>(*p);
      return std::nullopt;
    case ConstantIndex::link:
      return index_of(kLinks, text);
    case ConstantIndex::arch:
      return index_of(kArchs, text);
    case ConstantIndex::node_class:
      return index_of(kNodeClasses, text);
  }
  return std::nullopt;
}

std::string constant_index_name(ConstantIndex kind, int index) {
  switch (kind) {
    case ConstantIndex::algorithm:
      return std::string(name(static_cast<Algorithm>(index)));
    case ConstantIndex::protocol:
      return std::string(name(static_cast<Protocol>(index)));
    case ConstantIndex::link:
      return std::string(kLinks.at(index));
    case ConstantIndex::arch:
      return std::string(kArchs.at(index));
    case ConstantIndex::node_class:
      return std::string(kNodeClasses.at(index));
  }
  return "";
}

std::string constant_index_names(ConstantIndex kind) {
  switch (kind) {
    case ConstantIndex::algorithm: {
      std::string out;
      for (auto a : kAllAlgorithms) out += (out.empty() ? "" : ", ") + std::string(name(a));
      return out;
    }
    case ConstantIndex::protocol:
      return "ll, ll128, simple";
    case ConstantIndex::link:
      return join_names(kLinks);
    case ConstantIndex::arch:
      return join_names(kArchs);
    case ConstantIndex::node_class:
      return join_names(kNodeClasses);
  }
  return "";
}

double constant_max(ConstantUnit unit) {
  return unit == ConstantUnit::microseconds ? 1e6 : 1e5;
}

std::optional<size_t> constant_offset(std::string_view table, const std::vector<int>& index,
                                      int compcap_rows) {
  if (compcap_rows != kCompcapRowsV5 && compcap_rows != kCompcapRowsV7) return std::nullopt;
  const int order = constant_table_order(table);
  if (order < 0) return std::nullopt;
  const ConstantTable& t = constant_tables()[static_cast<size_t>(order)];
  if (index.size() != t.indices.size()) return std::nullopt;
  size_t flat = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    const int n = index_count(t.indices[i], compcap_rows);
    if (index[i] < 0 || index[i] >= n) return std::nullopt;
    flat = flat * static_cast<size_t>(n) + static_cast<size_t>(index[i]);
  }
  const TableOffsets& at = kTableOffsets[static_cast<size_t>(order)];
  return (compcap_rows == kCompcapRowsV7 ? at.v7 : at.v5) + flat * sizeof(double);
}

std::string constant_entry_name(std::string_view table, const std::vector<int>& index) {
  std::string out(table);
  const ConstantTable* t = find_constant_table(table);
  for (size_t i = 0; i < index.size(); ++i)
    out += "." + (t && i < t->indices.size() ? constant_index_name(t->indices[i], index[i])
                                             : std::to_string(index[i]));
  return out;
}

}  // namespace autotune::nccl
