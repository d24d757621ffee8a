#pragma once
// What a tuner plugin decides for one communicator at every message size: the plugin is opened and called as
// NCCL calls it (nccl/tuner_loader.hpp) on the cost table NCCL would hand it, and the sizes where its answer
// changes are found exactly, to the byte, by bisection between probe sizes. A probe set holds powers of two,
// their neighbours and every byte edge the caller names (a profile's rule edges), so a rule is never missed;
// between two probes with the same answer the answer is taken not to change (true of a rule table, and of
// NCCL's cost model, whose crossovers are few and far apart). Where the plugin leaves the table alone the
// decision shown is NCCL's own pick from that table: as good as the cost table given (for `explain`, the
// simulator's model of NCCL's cost model, labelled modelled). Not thread-safe: one map at a time per process
// (the plugin's logger is a plain C function, so its lines are collected in process-wide state).

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nccl/tuner_loader.hpp"
#include "nccl/vocabulary.hpp"

namespace autotune::explain {

using CostTable = std::array<float, nccl::kNumAlgorithms * nccl::kNumProtocols>;
// NCCL's cost table for one call: [algorithm][protocol] row-major, -1 where NCCL rules the entry out.
using CostModel = std::function<CostTable(nccl::Collective, uint64_t bytes)>;

struct Decision {
  bool by_plugin = false;  // the plugin changed NCCL's table or channels; otherwise NCCL's own pick
  nccl::Algorithm algorithm = nccl::Algorithm::ring;
  nccl::Protocol protocol = nccl::Protocol::simple;
  bool none = false;   // no usable entry at all (nothing NCCL could run)
  int channels = 0;    // 0: NCCL decides
  uint64_t chunk = 0;  // 0: NCCL's chunk size (getChunkSize left it, or the ABI has none)
  bool operator==(const Decision&) const = default;
};

struct Range {
  uint64_t first = 0, last = 0;  // inclusive
  Decision decision;
};

struct CollectiveMap {
  nccl::Collective collective = nccl::Collective::allreduce;
  std::vector<Range> ranges;  // contiguous, from 0 to max_bytes, neighbours always differ
};

struct MapRequest {
  nccl::TunerOpenOptions open;  // which library, which NCCL release's lookup (or one struct version)
  int nodes = 1, ranks = 2;
  int pipe_ops = 1;  // numPipeOps passed to every call
  int reg_buff = 0;  // regBuff passed to every call (v4 and later)
  uint64_t max_bytes = uint64_t(16) << 30;
  std::vector<nccl::Collective> collectives;
  // Extra probe sizes per collective (rule edges); sizes above max_bytes are ignored.
  std::function<std::vector<uint64_t>(nccl::Collective)> edges;
};

struct DecisionMap {
  std::string library;  // as opened
  std::string plugin_name;
  int abi_version = 0;
  std::vector<std::string> open_log;    // the loader's lines (library names tried)
  std::vector<std::string> plugin_log;  // what the plugin logged at init ("WARN: ..." / "INFO: ...")
  std::vector<CollectiveMap> collectives;
  uint64_t calls = 0;  // getCollInfo calls made
};

// nullopt (with *why set to the loader's last line) when NCCL would run without a tuner: then every decision
// is NCCL's own, and the caller says so.
std::optional<DecisionMap> map_decisions(const MapRequest& request, const CostModel& model, std::string* why);

}  // namespace autotune::explain
