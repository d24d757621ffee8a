#include "calibrate/shapes.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "common/input_error.hpp"

namespace autotune::calibrate {
namespace {

using runners::Scale;

[[noreturn]] void bad(const std::string& option, const std::string& what) {
  throw InputError("<arguments>", 0, option + ": " + what);
}

std::optional<int> positive(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// The groups a partition of the world's ranks forms, each as the set of global ranks; their shape is read
// off the nodes they touch.
std::optional<LayoutGroup> group_shape(const std::string& role, const std::vector<std::vector<int>>& groups,
                                       const World& w) {
  if (groups.empty() || groups.front().size() < 2) return std::nullopt;
  std::optional<runners::Scale> shape;
  for (const auto& g : groups) {
    std::map<int, int> per_node;
    for (int r : g) ++per_node[r / w.gpus_per_node];
    std::set<int> counts;
    for (const auto& [node, n] : per_node) counts.insert(n);
    if (counts.size() != 1)
      bad("--parallelism", "the " + role +
                               " groups would hold different numbers of ranks on different nodes; "
                               "use a layout whose groups are even across nodes");
    runners::Scale s{static_cast<int>(per_node.size()), static_cast<int>(g.size())};
    if (!shape) shape = s;
    if (!(*shape == s)) bad("--parallelism", "the " + role + " groups would not all have the same shape");
  }
  return LayoutGroup{role, *shape, static_cast<int>(groups.size())};
}

}  // namespace

std::vector<runners::Scale> parse_shapes(std::string_view text, const std::string& option) {
  std::vector<runners::Scale> out;
  for (std::string_view item : split(text, ',')) {
    size_t x = item.find('x');
    auto nodes = x == std::string_view::npos ? std::nullopt : positive(item.substr(0, x));
    auto per_node = x == std::string_view::npos ? std::nullopt : positive(item.substr(x + 1));
    if (!nodes || !per_node)
      bad(option, "expected shapes NODESxRANKS_PER_NODE such as 4x8,4x1, found '" + std::string(item) + "'");
    runners::Scale s{*nodes, *nodes * *per_node};
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

ParallelLayout parse_parallelism(std::string_view text) {
  ParallelLayout l;
  if (text == "fsdp") {
    l.fsdp = true;
    return l;
  }
  for (std::string_view item : split(text, ',')) {
    size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    auto value = eq == std::string_view::npos ? std::nullopt : positive(item.substr(eq + 1));
    int* slot = key == "tp"     ? &l.tp
                : key == "pp"   ? &l.pp
                : key == "dp"   ? &l.dp
                : key == "hsdp" ? &l.hsdp_shard
                                : nullptr;
    if (!slot || !value)
      bad("--parallelism",
          "expected tp=N,pp=N,dp=N (Megatron order), hsdp=SHARD or fsdp, found '" + std::string(item) + "'");
    *slot = *value;
  }
  return l;
}

std::vector<LayoutGroup> layout_groups(const ParallelLayout& l, const World& w) {
  const int world = w.nodes * w.gpus_per_node;
  std::vector<LayoutGroup> out;
  auto add = [&](const std::string& role, std::vector<std::vector<int>> groups) {
    if (auto g = group_shape(role, groups, w)) out.push_back(*g);
  };
  if (l.fsdp) {
    std::vector<int> all(world);
    for (int r = 0; r < world; ++r) all[r] = r;
    add("fsdp", {all});
    return out;
  }
  if (l.hsdp_shard > 0) {
    if (world % l.hsdp_shard != 0)
      bad("--parallelism", "hsdp=" + std::to_string(l.hsdp_shard) + " does not divide the job's " +
                               std::to_string(world) + " ranks");
    const int replicas = world / l.hsdp_shard;
    std::vector<std::vector<int>> shard(replicas), replicate(l.hsdp_shard);
    for (int r = 0; r < world; ++r)
      shard[r / l.hsdp_shard].push_back(r), replicate[r % l.hsdp_shard].push_back(r);
    add("shard", shard);
    add("replicate", replicate);
    return out;
  }
  if (l.tp * l.pp * l.dp != world)
    bad("--parallelism", "tp x pp x dp = " + std::to_string(l.tp * l.pp * l.dp) + " must equal the job's " +
                             std::to_string(w.nodes) + " x " + std::to_string(w.gpus_per_node) + " = " +
                             std::to_string(world) + " ranks");
  std::vector<std::vector<int>> tp(l.pp * l.dp), dp(l.pp * l.tp), pp(l.tp * l.dp);
  for (int p = 0; p < l.pp; ++p)
    for (int d = 0; d < l.dp; ++d)
      for (int t = 0; t < l.tp; ++t) {
        const int r = p * l.tp * l.dp + d * l.tp + t;
        tp[p * l.dp + d].push_back(r);
        dp[p * l.tp + t].push_back(r);
        pp[d * l.tp + t].push_back(r);
      }
  add("tp", tp);
  add("dp", dp);
  add("pp", pp);
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
