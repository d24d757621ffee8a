#include "nccl/tuner_constants.hpp"

#include <array>

#include "common/name_table.hpp"

namespace autotune::nccl {
namespace {

constexpr std::array<std::string_view, 3> kLinks = {"nvlink", "pci", "net"};
constexpr std::array<std::string_view, 4> kArchs = {"volta", "ampere", "hopper", "blackwell"};
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

}  // namespace autotune::nccl
