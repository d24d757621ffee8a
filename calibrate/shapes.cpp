#include "calibrate/shapes.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "common/input_error.hpp"
#include "common/text.hpp"

namespace autotune::calibrate {
namespace {

using runners::Scale;

[[noreturn]] void bad(const std::string& option, const std::string& what) {
  throw InputError("<arguments>", 0, option + ": " + what);
}

// The groups a partition of the world's ranks forms, each as the set of global ranks; their shape is read
// off the nodes they touch.
std::optional<LayoutGroup> group_shape(const std::string& kind, const std::vector<std::vector<int>>& groups,
                                       const World& w) {
  if (groups.empty() || groups.front().size() < 2) return std::nullopt;
  std::optional<runners::Scale> shape;
  for (const auto& g : groups) {
    std::map<int, int> per_node;
    for (int r : g) ++per_node[r / w.gpus_per_node];
    std::set<int> counts;
    for (const auto& [node, n] : per_node) counts.insert(n);
    if (counts.size() != 1)
      bad("--parallelism", "the " + kind +
                               " groups would hold different numbers of ranks on different nodes; "
                               "use a layout whose groups are even across nodes");
    runners::Scale s{static_cast<int>(per_node.size()), static_cast<int>(g.size())};
    if (!shape) shape = s;
    if (!(*shape == s)) bad("--parallelism", "the " + kind + " groups would not all have the same shape");
  }
  return LayoutGroup{kind, shape->nodes, shape->ranks, static_cast<int>(groups.size()),
                     kind_operations(kind)};
}

// Megatron-Core's orthogonal groups (parallel_state.py, generate_masked_orthogonal_rank_groups): the ranks of
// a grid of `sizes` (fastest first) that differ only in the dimensions marked in `in_group` form one group.
std::vector<std::vector<int>> orthogonal_groups(const std::vector<int>& sizes,
                                                const std::vector<bool>& in_group) {
  int world = 1, count = 1;
  for (size_t i = 0; i < sizes.size(); ++i) world *= sizes[i], count *= in_group[i] ? 1 : sizes[i];
  std::vector<std::vector<int>> groups(static_cast<size_t>(count));
  for (int r = 0; r < world; ++r) {
    int rest = r, key = 0, stride = 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int index = rest % sizes[i];
      rest /= sizes[i];
      if (!in_group[i]) key += index * stride, stride *= sizes[i];
    }
    groups[static_cast<size_t>(key)].push_back(r);
  }
  return groups;
}

// HSDP and FSDP take no other size: they are a different way of laying out the same ranks.
void check_sharded(const ParallelLayout& l, std::string_view key) {
  if (l.tp != 1 || l.cp != 1 || l.ep != 1 || l.pp != 1 || l.dp != 0)
    bad("--parallelism", std::string(key) +
                             " takes no other size: cp, ep, tp, pp and dp are Megatron-Core layouts, found "
                             "them together in '" +
                             l.text + "'");
}

std::vector<LayoutGroup> sharded_groups(const ParallelLayout& l, const World& w) {
  const int world = w.nodes * w.gpus_per_node;
  std::vector<LayoutGroup> out;
  auto add = [&](const std::string& kind, const std::vector<std::vector<int>>& groups) {
    if (auto g = group_shape(kind, groups, w)) out.push_back(*g);
  };
  if (l.fsdp) {
    add("fsdp", orthogonal_groups({world}, {true}));
    return out;
  }
  if (world % l.hsdp_shard != 0)
    bad("--parallelism", "hsdp=" + std::to_string(l.hsdp_shard) + " does not divide the job's " +
                             std::to_string(world) + " ranks");
  add("shard", orthogonal_groups({l.hsdp_shard, world / l.hsdp_shard}, {true, false}));
  add("replicate", orthogonal_groups({l.hsdp_shard, world / l.hsdp_shard}, {false, true}));
  return out;
}

// The data-parallel size: as given, or what the world leaves; every size together must fill the world and
// expert parallelism must split the data-parallel ranks.
int data_parallel_size(const ParallelLayout& l, const World& w) {
  const int world = w.nodes * w.gpus_per_node;
  const int model = l.tp * l.cp * l.pp;
  const std::string job = "the job's " + std::to_string(w.nodes) + " x " + std::to_string(w.gpus_per_node) +
                          " = " + std::to_string(world) + " ranks";
  if (l.dp == 0 && world % model != 0)
    bad("--parallelism", "tp x cp x pp = " + std::to_string(model) + " does not divide " + job);
  const int dp = l.dp > 0 ? l.dp : world / model;
  if (model * dp != world)
    bad("--parallelism", "tp x cp x pp x dp = " + std::to_string(model * dp) + " must equal " + job);
  if ((dp * l.cp) % l.ep != 0)
    bad("--parallelism", "ep=" + std::to_string(l.ep) + " must divide the data-parallel size " +
                             std::to_string(dp * l.cp) +
                             " (dp x cp: Megatron-Core forms the expert groups inside it)");
  return dp;
}

}  // namespace

runners::Scale shape_of(const LayoutGroup& g) {
  return {g.nodes, g.ranks};
}

std::vector<nccl::Operation> kind_operations(std::string_view kind) {
  using nccl::Operation;
  if (kind == "tp") return {Operation::allreduce, Operation::allgather, Operation::reducescatter};
  if (kind == "dp" || kind == "edp")
    return {Operation::allreduce, Operation::reducescatter, Operation::allgather};
  if (kind == "cp") return {Operation::sendrecv, Operation::allgather};
  if (kind == "pp") return {Operation::sendrecv};
  if (kind == "embedding" || kind == "replicate") return {Operation::allreduce};
  if (kind == "ep") return {Operation::alltoall};
  if (kind == "shard" || kind == "fsdp") return {Operation::allgather, Operation::reducescatter};
  throw std::logic_error("kind_operations: no such kind " + std::string(kind));
}

std::vector<ShapeRequest> parse_shapes(std::string_view text, const std::string& option) {
  std::vector<ShapeRequest> out;
  for (std::string_view item : split(text, ',')) {
    const size_t colon = item.find(':');
    const std::string_view shape = item.substr(0, colon);
    size_t x = shape.find('x');
    auto nodes = x == std::string_view::npos ? std::nullopt : parse_positive(shape.substr(0, x));
    auto per_node = x == std::string_view::npos ? std::nullopt : parse_positive(shape.substr(x + 1));
    if (!nodes || !per_node)
      bad(option, "expected shapes NODESxRANKS_PER_NODE[:OPERATION+...] such as 4x8,4x1:alltoall, found '" +
                      std::string(item) + "'");
    ShapeRequest s{{*nodes, *nodes * *per_node}, {}};
    if (colon != std::string_view::npos)
      for (std::string_view name : split(item.substr(colon + 1), '+')) {
        auto op = nccl::parse_operation(name);
        if (!op)
          bad(option, "expected operations such as allreduce+allgather, alltoall or sendrecv after '" +
                          std::string(shape) + ":', found '" + std::string(name) + "'");
        if (std::find(s.operations.begin(), s.operations.end(), *op) == s.operations.end())
          s.operations.push_back(*op);
      }
    auto same =
        std::find_if(out.begin(), out.end(), [&](const ShapeRequest& o) { return o.shape == s.shape; });
    if (same == out.end()) {
      out.push_back(s);
    } else if (same->operations.empty() || s.operations.empty()) {
      same->operations.clear();  // one of them asked for the calibration's collectives: all of them
    } else {
      for (auto op : s.operations)
        if (std::find(same->operations.begin(), same->operations.end(), op) == same->operations.end())
          same->operations.push_back(op);
    }
  }
  return out;
}

ParallelLayout parse_parallelism(std::string_view text) {
  ParallelLayout l;
  l.text = std::string(text);
  bool sharded = false;
  for (std::string_view item : split(text, ',')) {
    if (item == "fsdp") {
      l.fsdp = sharded = true;
      continue;
    }
    size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    auto value = eq == std::string_view::npos ? std::nullopt : parse_positive(item.substr(eq + 1));
    int* slot = key == "tp"     ? &l.tp
                : key == "cp"   ? &l.cp
                : key == "ep"   ? &l.ep
                : key == "pp"   ? &l.pp
                : key == "dp"   ? &l.dp
                : key == "hsdp" ? &l.hsdp_shard
                                : nullptr;
    if (!slot || !value)
      bad("--parallelism",
          "expected tp=N,cp=N,ep=N,dp=N,pp=N (Megatron-Core's order; dp defaults to the ranks left over), "
          "hsdp=SHARD or fsdp, found '" +
              std::string(item) + "'");
    *slot = *value;
    sharded = sharded || key == "hsdp";
  }
  if (l.fsdp && l.hsdp_shard > 0) bad("--parallelism", "expected one of hsdp=SHARD and fsdp, found both");
  if (sharded) check_sharded(l, l.fsdp ? "fsdp" : "hsdp");
  return l;
}

std::vector<LayoutGroup> layout_groups(const ParallelLayout& l, const World& w) {
  if (l.fsdp || l.hsdp_shard > 0) return sharded_groups(l, w);
  const int dp = data_parallel_size(l, w);
  std::vector<LayoutGroup> out;
  auto add = [&](const std::string& kind, const std::vector<std::vector<int>>& groups) {
    if (auto g = group_shape(kind, groups, w)) out.push_back(*g);
  };
  // The dense grid, tp-cp-dp-pp. The data-parallel groups are Megatron-Core's "dp-cp" groups: with context
  // parallelism the gradients are reduced across both (they are the "dp" groups when cp = 1).
  const std::vector<int> dense = {l.tp, l.cp, dp, l.pp};
  add("tp", orthogonal_groups(dense, {true, false, false, false}));
  add("cp", orthogonal_groups(dense, {false, true, false, false}));
  add("dp", orthogonal_groups(dense, {false, true, true, false}));
  // The expert grid over the same ranks, tp-ep-dp-pp (expert tensor parallel = tp, no cp).
  if (l.ep > 1) {
    const std::vector<int> expert = {l.tp, l.ep, dp * l.cp / l.ep, l.pp};
    add("ep", orthogonal_groups(expert, {false, true, false, false}));
    add("edp", orthogonal_groups(expert, {false, false, true, false}));
  }
  const auto pipelines = orthogonal_groups(dense, {false, false, false, true});
  add("pp", pipelines);
  // The word embeddings live on the first and the last stage (Megatron-Core's default_embedding_ranks).
  std::vector<std::vector<int>> embedding;
  for (const auto& p : pipelines) embedding.push_back({p.front(), p.back()});
  if (l.pp > 1) add("embedding", embedding);
  return out;
}

std::vector<runners::Scale> default_shapes(const World& w) {
  std::vector<runners::Scale> out;
  auto add = [&](int nodes, int per_node) {
    runners::Scale s{nodes, nodes * per_node};
    if (s.ranks >= 2 && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  add(w.nodes, w.gpus_per_node);
  add(1, w.gpus_per_node);
  add(w.nodes, 1);
  for (int n = 2; n < w.nodes; n *= 2) add(n, w.gpus_per_node), add(n, 1);
  std::sort(out.begin(), out.end());
  return out;
}

void check_shape(const runners::Scale& s, const World& w, const std::string& option) {
  const std::string text = runners::shape_text(s);
  if (s.ranks < 2) bad(option, "shape " + text + " is one rank, which NCCL never asks a tuner about");
  if (s.nodes > w.nodes)
    bad(option, "shape " + text + " needs " + std::to_string(s.nodes) + " nodes, the cluster has " +
                    std::to_string(w.nodes));
  if (s.ranks % s.nodes != 0 || w.gpus_per_node % s.ranks_per_node() != 0)
    bad(option, "shape " + text + ": the ranks per node must divide the " + std::to_string(w.gpus_per_node) +
                    " GPUs of a node, so that all its groups run at once");
}

}  // namespace autotune::calibrate
