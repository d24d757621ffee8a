#include "runners/collective_check.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "runners/bandwidth.hpp"

namespace autotune::runners {

using nccl::Collective;

BufferCounts buffer_counts(Collective c, int ranks, uint64_t bytes) {
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

std::vector<float> make_input(Collective c, int ranks, int rank, uint64_t bytes) {
  const BufferCounts counts = buffer_counts(c, ranks, bytes);
  std::vector<float> out(counts.send);
  for (uint64_t i = 0; i < counts.send; ++i) out[i] = input_value(rank, i);
  return out;
}

std::optional<std::vector<float>> expected_output(Collective c, int ranks, int rank, uint64_t bytes) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw std::invalid_argument(fmt::format("rank {} of {} ranks", rank, ranks));
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
