#pragma once
// How the NCCL stand-in decides each collective, as NCCL does it: the tuner plugin opened once per process
// through nccl/tuner_loader (NCCL_TUNER_PLUGIN's rules, the symbol order of the NCCL version reported), its
// init per communicator (ranks, nodes, the NVLink-domain info, the default constants), then per collective a
// contiguous float[7][3] cost table filled from the simulator's NCCL estimate for this node and communicator
// (-1 where NCCL would not allow the entry: the collective, the topology, NCCL_ALGO / NCCL_PROTO, LL128 where
// NCCL does not enable it), getCollInfo, the cheapest entry, and the plugin's channel count (0 keeps NCCL's).
// What the choice costs is the simulator's true time for it. Free of nccl.h (its types clash with the tuner
// ABI header's); results are ncclResult_t values as ints. Point-to-point work is only charged here (the
// simulator's p2p model), never tuned. A CommTuning is used by one thread at a time.

#include <cstdint>
#include <memory>
#include <string>

#include "simulator/p2p_model.hpp"

namespace autotune::standin {

struct CommShape {
  int rank = 0;
  int ranks = 1;
  int nodes = 1;
  int min_local_ranks = 1;  // fewest and most ranks of any node
  int max_local_ranks = 1;
  uint64_t comm_hash = 0;
};

struct TunedChoice {
  int algorithm = 1;  // NCCL ids
  int protocol = 2;
  int channels = 1;
  double estimate_us = 0.0;  // NCCL's estimate for it, as the table held it before the plugin
  double duration_us = 0.0;  // what it takes, in the simulator's truth
  bool corrupts = false;     // LL128 where it is unsafe: the data comes out wrong
  bool consulted = false;    // the tuner saw this collective (not for one rank)
};

class CommTuning {
 public:
  // Builds the communicator's cost model and calls the plugin's init. Throws std::runtime_error with the
  // reason when init fails or a NCCL_* setting is malformed (NCCL fails communicator creation for either).
  explicit CommTuning(const CommShape& shape);
  ~CommTuning();  // the plugin's finalize
  CommTuning(const CommTuning&) = delete;
  CommTuning& operator=(const CommTuning&) = delete;

  // `collective` is ncclFunc_t, `bytes` the tuner's nBytes (the whole buffer for AllGather/ReduceScatter).
  // Returns 0, or the ncclResult_t the collective fails with (the plugin's error; no usable entry; an entry
  // the plugin made usable that NCCL had ruled out) with *why set.
  int choose(int collective, uint64_t bytes, bool capturing, TunedChoice* out, std::string* why) const;

  // What one rank's point-to-point traffic takes in the simulator's truth (p2p_model.hpp): no tuner call, as
  // NCCL makes none for point-to-point work.
  double p2p_time_us(const sim::P2pTraffic& traffic) const;

  // "autotune (v5) from /path/libnccl-tuner-autotune.so", or "none".
  std::string plugin_text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace autotune::standin
