#include "nccl/vocabulary.hpp"

#include "common/text.hpp"

namespace autotune::nccl {
namespace {

constexpr std::array<std::string_view, kNumCollectives> kCollectiveNames = {
    "broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
constexpr std::array<std::string_view, kNumCollectives> kCollectiveNcclNames = {
    "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
constexpr std::array<std::string_view, kNumAlgorithms> kAlgorithmNames = {
    "tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree", "pat"};
constexpr std::array<std::string_view, kNumAlgorithms> kAlgorithmNcclNames = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, kNumProtocols> kProtocolNames = {"ll", "ll128", "simple"};
constexpr std::array<std::string_view, kNumProtocols> kProtocolNcclNames = {"LL", "LL128", "Simple"};

template <typename Enum, size_t N>
std::optional<Enum> parse_name(std::string_view text, const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i)
    if (iequals(text, names[i])) return static_cast<Enum>(i);
  return std::nullopt;
}

template <typename Enum, int N>
std::optional<Enum> from_id(int id) {
  if (id < 0 || id >= N) return std::nullopt;
  return static_cast<Enum>(id);
}

}  // namespace

std::string_view name(Collective c) {
  return kCollectiveNames[static_cast<int>(c)];
}
std::string_view name(Algorithm a) {
  return kAlgorithmNames[static_cast<int>(a)];
}
std::string_view name(Protocol p) {
  return kProtocolNames[static_cast<int>(p)];
}
std::string_view nccl_name(Collective c) {
  return kCollectiveNcclNames[static_cast<int>(c)];
}
std::string_view nccl_name(Algorithm a) {
  return kAlgorithmNcclNames[static_cast<int>(a)];
}
std::string_view nccl_name(Protocol p) {
  return kProtocolNcclNames[static_cast<int>(p)];
}

std::optional<Collective> parse_collective(std::string_view text) {
  return parse_name<Collective>(text, kCollectiveNames);
}
std::optional<Algorithm> parse_algorithm(std::string_view text) {
  return parse_name<Algorithm>(text, kAlgorithmNames);
}
std::optional<Protocol> parse_protocol(std::string_view text) {
  return parse_name<Protocol>(text, kProtocolNames);
}

std::optional<Collective> collective_from_id(int id) {
  return from_id<Collective, kNumCollectives>(id);
}
std::optional<Algorithm> algorithm_from_id(int id) {
  return from_id<Algorithm, kNumAlgorithms>(id);
}
std::optional<Protocol> protocol_from_id(int id) {
  return from_id<Protocol, kNumProtocols>(id);
}

bool is_allowed(Collective c, Algorithm a) {
  switch (c) {
    case Collective::broadcast:
    case Collective::reduce:
      return a == Algorithm::ring;
    case Collective::allgather:
    case Collective::reducescatter:
      return a == Algorithm::ring || a == Algorithm::pat || a == Algorithm::nvls ||
             a == Algorithm::collnet_direct;
    case Collective::allreduce:
      return a != Algorithm::pat;
  }
  return false;
}

bool is_allowed(Collective c, Algorithm a, Protocol p) {
  if (!is_allowed(c, a)) return false;
  bool simple_only = a == Algorithm::nvls || a == Algorithm::nvls_tree || a == Algorithm::pat;
  return !simple_only || p == Protocol::simple;
}

std::string allowed_algorithms_text(Collective c) {
  std::string out;
  for (Algorithm a : kAllAlgorithms) {
    if (!is_allowed(c, a)) continue;
    if (!out.empty()) out += ", ";
    out += name(a);
  }
  return out;
}

double bus_bandwidth_factor(Collective c, int ranks) {
  if (ranks <= 0) return 0.0;
  double n = ranks;
  switch (c) {
    case Collective::allreduce:
      return 2.0 * (n - 1.0) / n;
    case Collective::allgather:
    case Collective::reducescatter:
      return (n - 1.0) / n;
    case Collective::broadcast:
    case Collective::reduce:
      return 1.0;
  }
  return 1.0;
}

}  // namespace autotune::nccl
