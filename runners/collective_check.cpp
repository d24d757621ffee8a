#include "runners/collective_check.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "runners/bandwidth.hpp"

namespace autotune::runners {

using nccl::Collective;

namespace {

BufferCounts point_to_point_counts(nccl::Operation op, int ranks, uint64_t bytes) {
  const uint64_t n = static_cast<uint64_t>(ranks > 0 ? ranks : 1);
  const uint64_t part = element_count(op, ranks, bytes);
  switch (op) {
    case nccl::Operation::alltoall:
      return {part * n, part * n, part};
    case nccl::Operation::gather:
      return {part, part * n, part};
    case nccl::Operation::scatter:
      return {part * n, part, part};
    default:
      return {part, part, part};  // sendrecv: what each rank sends and receives
  }
}

// The receive buffer of a point-to-point operation from the inputs (see the header).
std::optional<std::vector<float>> expected_point_to_point(nccl::Operation op, int ranks, int rank,
                                                          uint64_t bytes) {
  const BufferCounts counts = point_to_point_counts(op, ranks, bytes);
  const uint64_t part = counts.op_count;
  std::vector<float> out(counts.recv, 0.0f);
  switch (op) {
    case nccl::Operation::alltoall:
      for (int j = 0; j < ranks; ++j)
        for (uint64_t i = 0; i < part; ++i)
          out[static_cast<uint64_t>(j) * part + i] = input_value(j, static_cast<uint64_t>(rank) * part + i);
      break;
    case nccl::Operation::sendrecv:
      for (uint64_t i = 0; i < counts.recv; ++i) out[i] = input_value((rank + ranks - 1) % ranks, i);
      break;
    case nccl::Operation::gather:
      if (rank != kCheckRoot) return std::nullopt;
      for (int j = 0; j < ranks; ++j)
        for (uint64_t i = 0; i < part; ++i) out[static_cast<uint64_t>(j) * part + i] = input_value(j, i);
      break;
    default:  // scatter
      for (uint64_t i = 0; i < part; ++i)
        out[i] = input_value(kCheckRoot, static_cast<uint64_t>(rank) * part + i);
      break;
  }
  return out;
}

}  // namespace

BufferCounts buffer_counts(nccl::Operation op, int ranks, uint64_t bytes) {
  auto collective = nccl::as_collective(op);
  if (!collective) return point_to_point_counts(op, ranks, bytes);
  const Collective c = *collective;
  const uint64_t n = static_cast<uint64_t>(ranks > 0 ? ranks : 1);
  const uint64_t count = element_count(c, ranks, bytes);
  switch (c) {
    case Collective::allgather:
      return {count, count * n, count};
    case Collective::reducescatter:
      return {count * n, count, count};
    case Collective::allreduce:
    case Collective::broadcast:
    case Collective::reduce:
      break;
  }
  return {count, count, count};
}

float input_value(int rank, uint64_t index) {
  // Two periods that are coprime to each other and to 3: neighbouring elements and neighbouring ranks differ,
  // and the sum over ranks still varies with the index whatever the rank count.
  const uint64_t r = static_cast<uint64_t>(rank);
  return static_cast<float>((index + 3 * r) % 17 + index % 5 + 1);
}

std::vector<float> make_input(nccl::Operation op, int ranks, int rank, uint64_t bytes) {
  const BufferCounts counts = buffer_counts(op, ranks, bytes);
  std::vector<float> out(counts.send);
  for (uint64_t i = 0; i < counts.send; ++i) out[i] = input_value(rank, i);
  return out;
}

std::optional<std::vector<float>> expected_output(nccl::Operation op, int ranks, int rank, uint64_t bytes) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw std::invalid_argument(fmt::format("rank {} of {} ranks", rank, ranks));
  auto collective = nccl::as_collective(op);
  if (!collective) return expected_point_to_point(op, ranks, rank, bytes);
  const Collective c = *collective;
  const BufferCounts counts = buffer_counts(c, ranks, bytes);
  std::vector<float> out(counts.recv, 0.0f);
  switch (c) {
    case Collective::allreduce:
    case Collective::reduce:
      if (c == Collective::reduce && rank != kCheckRoot) return std::nullopt;
      for (uint64_t i = 0; i < counts.recv; ++i)
        for (int r = 0; r < ranks; ++r) out[i] += input_value(r, i);
      break;
    case Collective::broadcast:
      for (uint64_t i = 0; i < counts.recv; ++i) out[i] = input_value(kCheckRoot, i);
      break;
    case Collective::allgather:
      // Rank r's whole send buffer lands at block r.
      for (int r = 0; r < ranks; ++r)
        for (uint64_t i = 0; i < counts.op_count; ++i)
          out[static_cast<uint64_t>(r) * counts.op_count + i] = input_value(r, i);
      break;
    case Collective::reducescatter: {
      // Block `rank` of the element-wise sum of every rank's whole send buffer.
      const uint64_t base = static_cast<uint64_t>(rank) * counts.op_count;
      for (uint64_t i = 0; i < counts.recv; ++i)
        for (int r = 0; r < ranks; ++r) out[i] += input_value(r, base + i);
      break;
    }
  }
  return out;
}

std::string CheckResult::describe() const {
  if (ok()) return fmt::format("all {} elements right", compared);
  return fmt::format("{} of {} elements wrong; first at [{}]: expected {}, found {}", wrong, compared,
                     first_index, expected, found);
}

CheckResult compare_exact(std::span<const float> expected, std::span<const float> found) {
  if (expected.size() != found.size())
    throw std::invalid_argument(
        fmt::format("comparing {} expected elements with {} found", expected.size(), found.size()));
  CheckResult out;
  out.compared = expected.size();
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == found[i]) continue;  // false for NaN: an unwritten (NaN-filled) buffer never passes
    if (out.wrong++ == 0) {
      out.first_index = i;
      out.expected = expected[i];
      out.found = found[i];
    }
  }
  return out;
}

}  // namespace autotune::runners
