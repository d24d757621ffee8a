#include "calibrate/group_launcher.hpp"

#include <filesystem>

#include "common/text.hpp"

namespace autotune::calibrate {
namespace {

std::string program(const Launcher& l) {
  return l.words.empty() ? "" : std::filesystem::path(l.words.front()).filename().string();
}

// The words without `flags` and their values ("-N 8", "-N8", "--nodes=8").
std::vector<std::string> without(const std::vector<std::string>& words,
                                 std::initializer_list<const char*> flags, std::string* value = nullptr) {
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    bool dropped = false;
    for (const std::string flag : flags) {
      if (words[i] == flag && i + 1 < words.size()) {
        if (value) *value = words[i + 1];
        ++i, dropped = true;
      } else if (flag.size() > 2 && words[i].rfind(flag + "=", 0) == 0) {
        if (value) *value = words[i].substr(flag.size() + 1);
        dropped = true;
      } else if (flag.size() == 2 && words[i].size() > 2 && words[i].rfind(flag, 0) == 0) {
        if (value) *value = words[i].substr(2);
        dropped = true;
      }
      if (dropped) break;
    }
    if (!dropped) out.push_back(words[i]);
  }
  return out;
}

std::optional<Launcher> narrowed_mpirun(const Launcher& whole, const ScaleGroup& g) {
  std::string hosts;
  std::vector<std::string> words = without(whole.words, {"-H", "--host"}, &hosts);
  const std::vector<std::string_view> all = split(hosts, ',');
  if (hosts.empty() || static_cast<int>(all.size()) < g.first_node + g.scale.nodes) return std::nullopt;
  words = without(words, {"-np", "-n", "--np"});
  std::string slice;
  for (int n = g.first_node; n < g.first_node + g.scale.nodes; ++n) {
    std::string host(all[static_cast<size_t>(n)].substr(0, all[static_cast<size_t>(n)].find(':')));
    slice += (slice.empty() ? "" : ",") + host + ":" + std::to_string(g.scale.ranks_per_node());
  }
  words.insert(words.begin() + 1, {"-np", std::to_string(g.scale.ranks), "-H", slice});
  return Launcher{words, whole.origin + ", " + group_text(g)};
}

}  // namespace

std::optional<Launcher> launcher_for_group(const Launcher& whole, const ScaleGroup& g) {
  const std::string name = program(whole);
  if (name == "srun") {
    std::vector<std::string> words =
        without(whole.words, {"-N", "--nodes", "-r", "--relative", "-n", "--ntasks", "--ntasks-per-node"});
    // The task count too: inside salloc/sbatch srun inherits the allocation's (SLURM_NTASKS) otherwise.
    words.insert(words.begin() + 1, {"-N", std::to_string(g.scale.nodes), "-n", std::to_string(g.scale.ranks),
                                     "--ntasks-per-node", std::to_string(g.scale.ranks_per_node()),
                                     "--relative=" + std::to_string(g.first_node)});
    return Launcher{words, whole.origin + ", " + group_text(g)};
  }
  if (name == "mpirun" || name == "mpiexec") return narrowed_mpirun(whole, g);
  return std::nullopt;
}

}  // namespace autotune::calibrate
