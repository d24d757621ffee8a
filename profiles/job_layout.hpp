#pragma once
// The parallel layout a calibration was given (`tune --parallelism`): every kind of communicator the job
// creates, its shape, how many groups of it run at once and the operations that kind runs. The journal header
// and the profile keep it, so that `explain` and the report can name the groups a shape serves ("tensor
// parallel, 16 groups") instead of the shape alone. Which kinds a layout makes is calibrate/shapes.hpp's.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl/operation.hpp"

namespace autotune::profiles {

// One kind of communicator: "tp" (tensor parallel), "cp" (context), "dp" (data), "ep" (expert), "edp"
// (expert data), "pp" (pipeline), "embedding" (first and last pipeline stage), "shard" and "replicate"
// (HSDP), "fsdp".
struct LayoutGroup {
  std::string kind;
  int nodes = 1;
  int ranks = 2;
  int groups = 0;  // how many run at once
  std::vector<nccl::Operation> operations;
  bool operator==(const LayoutGroup&) const = default;
};

struct JobLayout {
  std::string parallelism;  // as given: "tp=2,ep=8,pp=2"
  std::vector<LayoutGroup> groups;
  // The [env] entries this layout's point-to-point sweep chose ("NCCL_PXN_DISABLE"): each beat NCCL's
  // default for the layout's all-to-all and send/recv and cost none of the profile's collectives (tune's
  // search/p2p_setting.hpp verdict); their values are in [env]. Empty: none was chosen.
  std::vector<std::string> p2p_env = {};
  bool operator==(const JobLayout&) const = default;
};

// "tensor parallel" for "tp"; nullopt for a kind this version does not know.
std::optional<std::string_view> kind_title(std::string_view kind);
// "tensor parallel, 16 groups".
std::string describe_group(const LayoutGroup& group);
// "allreduce+allgather".
std::string operations_text(const std::vector<nccl::Operation>& operations);
// What is said of a point-to-point operation wherever rules are shown: "alltoall: no per-call rule exists
// (NCCL asks no tuner for point-to-point operations; process-wide settings only)".
std::string no_rule_note(nccl::Operation op);

// The groups of `layout` whose shape is nodes x ranks, in the layout's order.
std::vector<LayoutGroup> groups_of_shape(const JobLayout& layout, int nodes, int ranks);

// Two calibrations' layouts joined (profile merge, tune --add-shapes): either alone, or both, the second's
// groups after the first's but for those the first already holds, the layouts named "A + B".
std::optional<JobLayout> join_layouts(const std::optional<JobLayout>& first,
                                      const std::optional<JobLayout>& second);

// What is wrong with a layout read from a file (an unknown kind, a shape that is not nodes x an equal number
// of ranks on each, no group, no or a repeated operation); nullopt when nothing is.
std::optional<std::string> layout_problem(const LayoutGroup& group);

}  // namespace autotune::profiles
