#include "nccl/operation.hpp"

#include "common/text.hpp"

namespace autotune::nccl {
namespace {

constexpr std::array<std::string_view, 4> kPointToPointNames = {"alltoall", "sendrecv", "gather", "scatter"};

}  // namespace

Operation to_operation(Collective c) {
  return static_cast<Operation>(static_cast<int>(c));
}

std::optional<Collective> as_collective(Operation op) {
  return collective_from_id(static_cast<int>(op));
}

bool is_point_to_point(Operation op) {
  return !as_collective(op).has_value();
}

std::string_view name(Operation op) {
  if (auto c = as_collective(op)) return name(*c);
  return kPointToPointNames[static_cast<size_t>(static_cast<int>(op) - kNumCollectives)];
}

std::optional<Operation> parse_operation(std::string_view text) {
  if (auto c = parse_collective(text)) return to_operation(*c);
  for (size_t i = 0; i < kPointToPointNames.size(); ++i)
    if (iequals(text, kPointToPointNames[i])) return static_cast<Operation>(kNumCollectives + i);
  return std::nullopt;
}

double bus_bandwidth_factor(Operation op, int ranks) {
  if (auto c = as_collective(op)) return bus_bandwidth_factor(*c, ranks);
  if (ranks <= 0) return 0.0;
  if (op == Operation::sendrecv) return 1.0;
  return (ranks - 1.0) / ranks;
}

}  // namespace autotune::nccl
