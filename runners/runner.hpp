#pragma once
// The seam between the search engine and whatever measures: real NCCL collectives on GPUs (nccl_runner), the
// labelled simulator (sim_runner), or a scripted fake in tests. A Runner lives inside one process-wide
// setting (NCCL_IB_HCA, NCCL_CROSS_NIC, ...): those cannot change inside a process, so each gets its own job.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nccl/operation.hpp"
#include "nccl/vocabulary.hpp"

namespace autotune::runners {

// What to force for an operation. Nothing forced (all empty, channels 0) = NCCL's own choice, the baseline.
struct Candidate {
  std::optional<nccl::Algorithm> algorithm;
  std::optional<nccl::Protocol> protocol;
  int channels = 0;  // 0 = NCCL decides
  bool is_default() const { return !algorithm && !protocol && channels == 0; }
  bool operator==(const Candidate&) const = default;
};
// "default", "ring/simple", "tree/ll128/ch8", "*/ll/ch4".
std::string to_string(const Candidate& c);
// The inverse of to_string; nullopt for anything else (an unknown name, a channel count outside 1..64).
std::optional<Candidate> parse_candidate(std::string_view text);

struct MeasureRequest {
  nccl::Collective collective = nccl::Collective::allreduce;
  uint64_t bytes =
      0;  // nccl-tests' size: for AllGather/ReduceScatter, alltoall, gather, scatter the whole buffer
  Candidate candidate;
  int repetitions = 5;  // timed repetitions; each is a loop of several operations
  // How many identical requests (same collective, bytes, candidate, repetitions) a calibration made before
  // this one. A runner whose noise is seeded (the simulator) seeds it with this too, so that a resumed
  // calibration, which replays what its journal holds instead of asking the runner, measures what an
  // uninterrupted one would have. Real runners ignore it.
  int attempt = 0;
  // A point-to-point operation measured instead of `collective` (alltoall, sendrecv, gather, scatter), which
  // NCCL's tuner never sees: nothing can be forced for it (candidate stays the default) and no rule comes of
  // it. nullopt: the collective above. Last, so that brace-initialised requests keep their meaning; set
  // both through set_operation().
  std::optional<nccl::Operation> point_to_point = std::nullopt;

  // What is measured, whichever field holds it; an Operation's id equals its Collective's, so keys made of
  // static_cast<int>(operation()) keep the collectives' old values.
  nccl::Operation operation() const {
    return point_to_point ? *point_to_point : nccl::to_operation(collective);
  }
  void set_operation(nccl::Operation op);
};

enum class Outcome {
  ok,
  unsupported,   // NCCL could not use the forced choice here (the plugin saw the entry disabled)
  wrong_result,  // the output did not match the expected values
  timed_out,     // the watchdog aborted the communicator
  failed         // any other error (with detail)
};
std::string_view name(Outcome o);
std::optional<Outcome> parse_outcome(std::string_view text);

struct Measurement {
  MeasureRequest request;
  Outcome outcome = Outcome::ok;
  std::string detail;                 // why, when outcome != ok
  std::vector<double> times_us;       // per repetition: time of one operation, max over ranks
  std::vector<double> mean_times_us;  // per repetition: mean over ranks
  double algbw_gbps = 0.0;            // from the median of times_us
  double busbw_gbps = 0.0;
  // What NCCL actually ran, where known (the plugin hook reports it).
  std::optional<nccl::Algorithm> used_algorithm;
  std::optional<nccl::Protocol> used_protocol;
  int used_channels = 0;
  // Per group when every group of a shape ran at once (runners/group_layout.hpp's order): the median over
  // repetitions of the group's slowest rank. Empty when one communicator ran.
  std::vector<double> group_times_us;
  double median_us() const;
};

struct RunnerInfo {
  std::string kind;    // "nccl" or "simulator"
  std::string source;  // "measured" or "simulated": goes into every journal line and profile
  int ranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;  // ranks per node of the measured communicator
  std::string gpu_model;
  std::string nccl_version;  // "2.28.9"
  std::string description;   // one line for people
  int groups = 1;            // communicators of this shape (ranks, nodes, gpus_per_node) measured at once
};

class Runner {
 public:
  virtual ~Runner() = default;
  virtual RunnerInfo info() const = 0;
  // Measures every request, in order. Never throws for a candidate that fails: that is a Measurement with
  // outcome != ok. Throws only when the runner itself cannot go on (lost communicator and cannot rebuild).
  virtual std::vector<Measurement> run(std::span<const MeasureRequest> batch) = 0;
};

}  // namespace autotune::runners
