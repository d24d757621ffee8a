#pragma once
// The profile: what one calibration of one cluster decided. One TOML file (profile_toml.hpp reads and writes
// it); the plugin compiles its rules into a RuleTable, the launcher exports its [env].

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/input_file.hpp"
#include "nccl/vocabulary.hpp"
#include "profiles/job_layout.hpp"

namespace autotune::profiles {

inline constexpr int kSchemaVersion = 1;

// Limits that keep a profile something every rank can load at init in a blink: a calibration writes a few
// hundred rules (tens of KiB); the largest seen by hand, a few thousand.
inline constexpr InputKind kProfileInput{"a profile", uint64_t{64} << 20};
inline constexpr size_t kMaxRules = 100000;

// An inclusive range of node or rank counts; a rule without one applies at any scale.
struct CountRange {
  int min = 1;
  int max = std::numeric_limits<int>::max();
  bool contains(int n) const { return n >= min && n <= max; }
  bool overlaps(const CountRange& o) const { return min <= o.max && o.min <= max; }
  bool operator==(const CountRange&) const = default;
};

// How sure the calibration was of a rule: its gain over NCCL's default (default time / rule time - 1, the
// geometric mean over the measured sizes of its range; at one size the same as busbw / default busbw - 1),
// and that gain's bootstrap interval [low, high] at `confidence`, from `sizes` measured sizes with
// `default_samples` timed repetitions of NCCL's default beside the rule's own Rule::samples.
struct GainEvidence {
  double gain = 0.0;
  double low = 0.0;
  double high = 0.0;
  double confidence = 0.0;
  int sizes = 0;
  int default_samples = 0;
  bool operator==(const GainEvidence&) const = default;
};

// How a rule of a calibrated scale came to be: absent, measured there in full (every rule before predicted
// scales); `predicted`, from NCCL's cost model fitted to the smaller scales of the same shape
// (search/cost_fit.hpp), with none of its sizes measured at its scale; `confirmed`, predicted and then
// measured at its scale at some of its sizes (its edges, checks), agreeing within the noise.
enum class RuleBasis { confirmed, predicted };
std::string_view name(RuleBasis b);
std::optional<RuleBasis> parse_rule_basis(std::string_view text);

// What a communicator is, as the plugin learns it at init: nodes, ranks, and the fewest and most ranks any of
// its nodes holds (NCCL's v5+ init gives them as the NVLink domains; older ABIs give none, and an even spread
// is assumed when the ranks divide by the nodes). Unknown per-node counts are 0.
struct CommShape {
  int nodes = 1;
  int ranks = 1;
  int min_ranks_per_node = 0;
  int max_ranks_per_node = 0;
  bool even() const { return min_ranks_per_node > 0 && min_ranks_per_node == max_ranks_per_node; }
  // An even shape of nodes x ranks per node.
  static CommShape of(int nodes, int ranks) {
    const int per_node = nodes > 0 && ranks % nodes == 0 ? ranks / nodes : 0;
    return {nodes, ranks, per_node, per_node};
  }
};

struct Rule {
  nccl::Collective collective = nccl::Collective::allreduce;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;  // inclusive
  nccl::Algorithm algorithm = nccl::Algorithm::ring;
  nccl::Protocol protocol = nccl::Protocol::simple;
  int channels = 0;  // 0 = NCCL decides
  std::optional<CountRange> nodes;
  std::optional<CountRange> ranks;
  // Ranks on each node: a rule calibrated on 4 nodes x 8 is for communicators with 8 on every node, not for
  // an uneven 12 + 20. A communicator whose per-node counts are unknown never matches a rule that names them.
  std::optional<CountRange> ranks_per_node;
  // Conditions on what NCCL passes per call (getCollInfo's numPipeOps, regBuff; NCCL's example-plugin CSV
  // columns 9 and 10); absent = any. regBuff is unknown under the v2/v3 ABI: a rule naming it then does not
  // apply.
  std::optional<CountRange> pipe_ops;
  std::optional<bool> reg_buff;
  // The chunk size getChunkSize (ABI v6/v7) gives NCCL when this rule's algorithm and protocol run; 0 keeps
  // NCCL's. Validated against what the profile's NCCL_BUFFSIZE allows (nccl/chunk_size.hpp).
  uint64_t chunk_bytes = 0;
  // Evidence from the calibration (absent in hand-written or imported rules).
  std::optional<double> busbw_gbps;
  std::optional<double> default_busbw_gbps;
  std::optional<int> samples;
  // The calibration's runner-up in this range: the next fastest candidate that passed the result check, and
  // its bus bandwidth. Where it is close to the rule's, [online] explore may try it in production.
  struct RunnerUp {
    nccl::Algorithm algorithm = nccl::Algorithm::ring;
    nccl::Protocol protocol = nccl::Protocol::simple;
    int channels = 0;
    double busbw_gbps = 0.0;
    bool operator==(const RunnerUp&) const = default;
  };
  std::optional<RunnerUp> runner_up;
  std::optional<GainEvidence> gain;
  std::optional<RuleBasis> basis;  // absent: measured at its scale
  int source_line = 0;             // where it was read from, for messages; not written back

  bool applies_to(const CommShape& c) const {
    return (!nodes || nodes->contains(c.nodes)) && (!ranks || ranks->contains(c.ranks)) &&
           (!ranks_per_node || (c.min_ranks_per_node > 0 && ranks_per_node->contains(c.min_ranks_per_node) &&
                                ranks_per_node->contains(c.max_ranks_per_node)));
  }
  bool has_call_conditions() const { return pipe_ops.has_value() || reg_buff.has_value(); }
};

// The rule's gain as every command shows it (time ratio - 1): its evidence's, else busbw / default busbw - 1
// where both are known, else nullopt.
std::optional<double> gain_of(const Rule& rule);

struct ClusterInfo {
  std::string name;
  std::string fingerprint;
  // What the fingerprint hashes (topology/fingerprint.hpp: fingerprint_facts), so that a node that does not
  // match can be told what differs. Absent in profiles written before it was kept.
  std::vector<std::string> fingerprint_facts;
  std::string gpu_model;
  int gpus_per_node = 0;
  int nodes = 0;
  int nics_per_node = 0;
};

// Where a profile's numbers come from: real GPUs (measured), nccl-tests logs (imported), or nccl-autotune's
// model of NCCL, directly (simulated) or through the stand-in NCCL of tests/standin (standin).
enum class Source { measured, simulated, imported, standin };
std::string_view name(Source s);
std::optional<Source> parse_source(std::string_view text);
// Simulated and stand-in numbers come from the model, not from GPUs: never matched to a node by fingerprint,
// labelled wherever they are shown.
bool from_model(Source s);
// "SIMULATED" or "STAND-IN" for a model's source; "" for the others.
std::string_view model_label(Source s);

struct Provenance {
  std::string created;  // RFC 3339
  std::string tool_version;
  std::string nccl_version;  // "2.28.9"
  Source source = Source::measured;
  std::string command;
  // What the health gate before calibration saw ("8 node(s) checked by check (simulated): all ok"), and the
  // nodes it left out (--exclude-unhealthy), each with why, and every finding it saw on the nodes (warnings,
  // and blocking ones it was told to leave out). Empty in hand-written or imported profiles.
  std::string health;
  std::vector<std::string> excluded_nodes;
  std::vector<std::string> health_findings;
};

// What the plugin does for a communicator whose (nodes, ranks) no rule names.
enum class UncalibratedPolicy {
  nccl_decides,  // no rule applies: NCCL's own choice (the default)
  nearest_scale  // use the rules of the nearest calibrated scale
};

// One override of NCCL's tuning constants (ncclTunerConstants_v5_t / _v7_t), applied by the v5-v7 plugin at
// init. `table` is one of: base_latency [algorithm][protocol], hw_latency
// [nvlink|pci|net][algorithm][protocol], ll_max_bw / per_ch_max_ring_ll128_bw / per_ch_max_tree_ll128_bw /
// per_ch_max_tree_bw / per_ch_max_nvls_tree_bw [volta|ampere|hopper|blackwell|rubin][1|2|3 = nodes 1, 2,
// more] (rubin only under ABI v7). `index` holds the indices in that order.
struct ConstantOverride {
  std::string table;
  std::vector<int> index;
  double value = 0.0;
  int source_line = 0;
};

// [online]: what the plugin does in production beyond applying the rules. Absent: nothing (no profiler
// events, no telemetry, no exploration).
struct OnlineSettings {
  bool telemetry = false;  // write each job's per-choice GPU times under <store>/telemetry/
  double explore = 0.0;    // at most this fraction of calls in close ranges try the runner-up (0..0.5)
  bool operator==(const OnlineSettings&) const = default;
};
inline constexpr double kMaxExplore = 0.5;

struct Profile {
  int schema = kSchemaVersion;
  ClusterInfo cluster;
  Provenance provenance;
  std::map<std::string, std::string> env;  // process-wide NCCL settings chosen by calibration
  UncalibratedPolicy uncalibrated = UncalibratedPolicy::nccl_decides;
  // Whether the plugin applies the rules under an NCCL of another major.minor than provenance.nccl_version
  // ([policy] other_nccl = "apply"; default "refuse": NCCL's algorithms and cost model change between minor
  // releases, and rules measured under one can lose under another).
  bool apply_under_other_nccl = false;
  std::vector<ConstantOverride> constants;
  std::optional<OnlineSettings> online;
  // [layout]: the parallel layout the calibration was given, so that explain and the report can name the
  // groups a shape serves; absent when shapes were named otherwise.
  std::optional<JobLayout> layout;
  std::vector<Rule> rules;
};

}  // namespace autotune::profiles
