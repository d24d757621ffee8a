#pragma once
// The tuning constants the simulator's cost model uses, laid out as NCCL hands them to a v5/v6 tuner's init
// (ncclTunerConstants_v5_t, pre-filled with NCCL's defaults): what the stand-in NCCL gives the plugin, so the
// plugin sees the same numbers the model that answers it uses. Pure function.

#include "nccl/tuner_abi.h"

namespace autotune::sim {

// Base and hardware latencies and the LL / per-channel bandwidth caps per GPU generation and node class
// (NCCL-FACTS.md, "NCCL's cost model"). Entries NCCL's defaults leave 0 are 0 here too.
ncclTunerConstants_v5_t default_tuner_constants();

}  // namespace autotune::sim
