#include "nccl/chunk_size.hpp"

#include <algorithm>

#include "common/byte_size.hpp"

namespace autotune::nccl {
namespace {

constexpr uint64_t kSteps = 8;           // NCCL_STEPS
constexpr uint64_t kRingChunkSteps = 4;  // ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS = NCCL_STEPS / 2

std::optional<uint64_t> positive_integer(const std::optional<std::string>& text) {
  if (!text || text->empty() || text->size() > 18) return std::nullopt;
  uint64_t v = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0) return std::nullopt;
  return v;
}

const char* buffer_variable(Protocol p) {
  return p == Protocol::ll      ? "NCCL_LL_BUFFSIZE"
         : p == Protocol::ll128 ? "NCCL_LL128_BUFFSIZE"
                                : "NCCL_BUFFSIZE";
}

}  // namespace

BufferSizes buffer_sizes(const std::function<std::optional<std::string>(const std::string&)>& lookup) {
  BufferSizes b;
  if (auto v = positive_integer(lookup("NCCL_LL_BUFFSIZE"))) b.ll = *v;
  if (auto v = positive_integer(lookup("NCCL_LL128_BUFFSIZE"))) b.ll128 = *v;
  if (auto v = positive_integer(lookup("NCCL_BUFFSIZE"))) b.simple = *v;
  return b;
}

BufferSizes buffer_sizes(const std::map<std::string, std::string>& env) {
  return buffer_sizes([&](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

uint64_t chunk_grain(Protocol p) {
  switch (p) {
    case Protocol::ll:
      return 16;
    case Protocol::ll128:
      return 32 * 8 / 16 * 15 * 8;  // WARP_SIZE x LL128_SHMEM_ELEMS_PER_THREAD / LINEELEMS x DATAELEMS x 8
    case Protocol::simple:
      return 512;
  }
  return 512;
}

uint64_t max_chunk_bytes(Collective c, Algorithm a, Protocol p, const BufferSizes& buffers) {
  uint64_t limit = 0;
  switch (p) {
    case Protocol::ll:
      limit = buffers.ll / kSteps / 2;
      break;
    case Protocol::ll128:
      limit = buffers.ll128 / kSteps / 16 * 15;
      break;
    case Protocol::simple: {
      const bool ring_steps = a == Algorithm::ring && c != Collective::broadcast && c != Collective::reduce;
      limit = buffers.simple / kSteps * (ring_steps ? kRingChunkSteps : 1);
      break;
    }
  }
  return limit / chunk_grain(p) * chunk_grain(p);
}

std::optional<std::string> chunk_problem(uint64_t chunk, Collective c, Algorithm a, Protocol p,
                                         const BufferSizes& buffers) {
  const uint64_t grain = chunk_grain(p), limit = max_chunk_bytes(c, a, p, buffers);
  const std::string what = std::string(name(a)) + "/" + std::string(name(p)) + " " + std::string(name(c));
  if (chunk == 0 || chunk % grain != 0)
    return "expected a multiple of " + std::to_string(grain) + " bytes (" + std::string(name(p)) +
           "'s grain: NCCL rounds a chunk down to it); found " + std::to_string(chunk);
  if (chunk > limit) {
    const uint64_t buffer = p == Protocol::ll      ? buffers.ll
                            : p == Protocol::ll128 ? buffers.ll128
                                                   : buffers.simple;
    return "expected at most " + format_byte_size(limit) + " for " + what + " (what " + buffer_variable(p) +
           " = " + std::to_string(buffer) + " allows; NCCL clamps a larger chunk to it); found " +
           format_byte_size(chunk) + ": raise " + buffer_variable(p) + " or lower the chunk";
  }
  return std::nullopt;
}

}  // namespace autotune::nccl
