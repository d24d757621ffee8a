#pragma once
// The search space of a calibration: which collectives, which message sizes (a x2 grid), which candidates
// (algorithm x protocol pairs NCCL allows for each collective on this cluster, times the channel counts asked
// for), at which scales and under which process-wide settings. A value type built once per calibration.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "runners/process_setting.hpp"
#include "runners/runner.hpp"

namespace autotune::search {

struct SearchSpaceOptions {
  std::vector<nccl::Collective> collectives;  // empty = all five
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 8ull << 30;
  std::vector<int> channels;  // empty = NCCL decides (channels 0 only)
  // Algorithms the cluster can run (from the topology analysis); nullopt = every algorithm NCCL knows, and
  // the runner reports the unsupported ones as such.
  std::optional<std::set<nccl::Algorithm>> algorithms;
  std::vector<runners::Scale> scales;             // at least one
  std::vector<runners::ProcessSetting> settings;  // at least one; "default" first by convention
  // A scale's own collectives, each one of `collectives` (a parallel layout's pipeline groups do not
  // all-gather); a scale not named measures all of them.
  std::map<runners::Scale, std::vector<nccl::Collective>> scale_collectives;
  // A scale's point-to-point operations (alltoall, sendrecv, ...): NCCL's default at every size, nothing
  // forced (NCCL asks no tuner for them, so there is no candidate and no rule). A scale that runs only these
  // is named in scale_collectives with none.
  std::map<runners::Scale, std::vector<nccl::Operation>> scale_point_to_point;
};

struct CollectiveSpace {
  nccl::Collective collective = nccl::Collective::allreduce;
  std::vector<runners::Candidate> candidates;  // never the default: that is measured at every size anyway
};

struct SearchSpace {
  std::vector<CollectiveSpace> collectives;
  std::vector<uint64_t> sizes;  // ascending, min_bytes x 2^k up to max_bytes (max_bytes included)
  std::vector<runners::Scale> scales;
  std::vector<runners::ProcessSetting> settings;                                // NCCL's defaults first
  std::map<runners::Scale, std::vector<nccl::Collective>> scale_collectives;    // as given
  std::map<runners::Scale, std::vector<nccl::Operation>> scale_point_to_point;  // as given
  // The collectives measured at `scale`, in `collectives`' order.
  std::vector<CollectiveSpace> collectives_at(const runners::Scale& scale) const;
  // The point-to-point operations measured at `scale` (none unless named).
  std::vector<nccl::Operation> point_to_point_at(const runners::Scale& scale) const;
};

// Throws InputError("<arguments>", 0, ...) for an empty or inverted size range, no scale, no setting, a
// channel count < 1, duplicate setting ids, a scale's collective that is not among the collectives, or a
// scale's point-to-point operation that is a collective.
SearchSpace build_search_space(const SearchSpaceOptions& options);

// min, 2 min, 4 min, ... up to max; max itself is included when it is not on the grid.
std::vector<uint64_t> size_grid(uint64_t min_bytes, uint64_t max_bytes);

}  // namespace autotune::search
