#pragma once
// The NCCL stand-in's own settings, all from the environment (see README.md): the NCCL version it reports
// (NCCL_STANDIN_VERSION, "2.30.7" or 23007; default the header's), how long ncclCommInitRank waits for the
// other ranks (NCCL_STANDIN_INIT_TIMEOUT, seconds, default 60), the seed of the simulator's deviations
// (NCCL_STANDIN_SEED, default 42), the shared memory each rank stages data through per communicator
// (NCCL_STANDIN_STAGE_BYTES, 4096 or more; default 32 MiB / ranks within 256 KiB..4 MiB), and the faults.
// Read once per process; a bad value ends the process with status 2 and one line naming the variable.
// Thread-safe after the first call.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nccl/vocabulary.hpp"

namespace autotune::standin {

using AlgoProto = std::pair<nccl::Algorithm, nccl::Protocol>;

struct Faults {
  std::vector<int> init_fail_ranks;  // NCCL_STANDIN_FAULT_INIT_RANK: these ranks' communicator creation fails
  int init_fail_after = 0;           // NCCL_STANDIN_FAULT_INIT_AFTER: ... after this many succeeded
  std::vector<AlgoProto> hang;       // NCCL_STANDIN_FAULT_HANG: never complete until aborted
  std::vector<AlgoProto> wrong;      // NCCL_STANDIN_FAULT_WRONG: complete with wrong data
  std::optional<uint64_t> async_after;  // NCCL_STANDIN_FAULT_ASYNC_AFTER: an asynchronous error after N ops
  int async_rank = 0;                   // NCCL_STANDIN_FAULT_ASYNC_RANK: ... on this rank
  std::optional<int> slow_rank;         // NCCL_STANDIN_FAULT_SLOW_RANK: this rank's part takes longer
  double slow_factor = 2.0;             // NCCL_STANDIN_FAULT_SLOW_FACTOR: ... by this factor
};

struct Settings {
  int version_code = 0;
  double init_timeout_s = 60.0;
  size_t stage_bytes = 0;  // NCCL_STANDIN_STAGE_BYTES: staging per rank and communicator; 0 = from the ranks
  uint64_t seed = 42;
  Faults faults;
};

const Settings& settings();

}  // namespace autotune::standin
