#pragma once
// A CUDA event: where a stream stood when it was last recorded, on the virtual GPU clock. Guarded by the
// streams' mutex (streams.hpp).

#include "tests/standin/cudart/streams.hpp"

namespace autotune::standin {

struct EventState {
  int device = 0;
  unsigned flags = 0;       // cudaEventDisableTiming, ...
  MarkerPtr marker;         // the last record; empty until recorded
  bool in_capture = false;  // the last record went into a graph being captured
};

}  // namespace autotune::standin
