#include "runners/bandwidth.hpp"

namespace autotune::runners {

double algbw_gbps(uint64_t bytes, double time_us) {
  if (!(time_us > 0.0)) return 0.0;
  // bytes / (time_us * 1e-6 s) / 1e9 = bytes / (time_us * 1e3)
  return static_cast<double>(bytes) / (time_us * 1e3);
}

double busbw_gbps(nccl::Collective c, int ranks, uint64_t bytes, double time_us) {
  return algbw_gbps(bytes, time_us) * nccl::bus_bandwidth_factor(c, ranks);
}

uint64_t element_count(nccl::Collective c, int ranks, uint64_t bytes, int element_size) {
  uint64_t count = bytes / static_cast<uint64_t>(element_size > 0 ? element_size : 1);
  bool per_rank = c == nccl::Collective::allgather || c == nccl::Collective::reducescatter;
  if (per_rank && ranks > 0) count /= static_cast<uint64_t>(ranks);
  return count;
}

}  // namespace autotune::runners

namespace autotune::runners {

double busbw_gbps(nccl::Operation op, int ranks, uint64_t bytes, double time_us) {
  return algbw_gbps(bytes, time_us) * nccl::bus_bandwidth_factor(op, ranks);
}

uint64_t element_count(nccl::Operation op, int ranks, uint64_t bytes, int element_size) {
  if (auto c = nccl::as_collective(op)) return element_count(*c, ranks, bytes, element_size);
  const uint64_t size = static_cast<uint64_t>(element_size > 0 ? element_size : 1);
  const uint64_t count = bytes / size;
  if (op == nccl::Operation::sendrecv) return count;
  // nccl-tests: (count / nranks) & ~(16 / eltSize - 1), for elements of up to 16 bytes.
  const uint64_t per_peer = count / static_cast<uint64_t>(ranks > 0 ? ranks : 1);
  const uint64_t unit = size <= 16 ? 16 / size : 1;
  return per_peer / unit * unit;
}

}  // namespace autotune::runners
