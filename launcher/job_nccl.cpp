#include "launcher/job_nccl.hpp"

#include <glob.h>

#include <fstream>
#include <set>
#include <sstream>

#include "nccl/library_file.hpp"

namespace autotune::launcher {
namespace fs = std::filesystem;
namespace {

using SearchPath = std::vector<std::pair<fs::path, std::string>>;

std::optional<std::string> set(const EnvLookup& env, const char* name) {
  auto v = env(name);
  return v && !v->empty() ? v : std::nullopt;
}

std::vector<fs::path> glob_paths(const std::string& pattern) {
  std::vector<fs::path> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  return out;
}

// The directories an ld.so.conf names, its includes followed (relative to `root`), as ldconfig reads them.
void read_ld_conf(const fs::path& root, const fs::path& conf, SearchPath& out, int depth) {
  std::ifstream in(root / conf.relative_path());
  std::string line;
  while (depth < 8 && std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (first != "include") {
      out.emplace_back(root / fs::path(first).relative_path(), conf.string());
      continue;
    }
    std::string pattern;
    while (words >> pattern) {
      fs::path p = fs::path(pattern).is_absolute() ? fs::path(pattern) : conf.parent_path() / pattern;
      for (const fs::path& included : glob_paths((root / p.relative_path()).string()))
        read_ld_conf(root, "/" / included.lexically_relative(root), out, depth + 1);
    }
  }
}

void python_wheels(const std::string& prefix, const char* what, SearchPath& out) {
  for (const fs::path& dir : glob_paths(prefix + "/lib/python3*/site-packages/nvidia/nccl/lib"))
    out.emplace_back(dir, std::string(what) + " (the nvidia-nccl wheel)");
}

}  // namespace

SearchPath nccl_search_path(const EnvLookup& env, const fs::path& root) {
  SearchPath out;
  if (auto ld = set(env, "LD_LIBRARY_PATH")) {
    std::istringstream dirs(*ld);
    std::string d;
    while (std::getline(dirs, d, ':'))
      if (!d.empty()) out.emplace_back(d, "LD_LIBRARY_PATH");
  }
  if (auto venv = set(env, "VIRTUAL_ENV")) python_wheels(*venv, "VIRTUAL_ENV", out);
  if (auto conda = set(env, "CONDA_PREFIX")) {
    python_wheels(*conda, "CONDA_PREFIX", out);
    out.emplace_back(fs::path(*conda) / "lib", "CONDA_PREFIX");
  }
  if (auto home = set(env, "NCCL_HOME")) out.emplace_back(fs::path(*home) / "lib", "NCCL_HOME");
  read_ld_conf(root, "/etc/ld.so.conf", out, 0);
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"})
    out.emplace_back(root / fs::path(d).relative_path(), "the loader's default directories");
  return out;
}

JobNccl find_job_nccl(const EnvLookup& env, const fs::path& root) {
  JobNccl found;
  std::string why;
  if (auto named = set(env, "NCCL_AUTOTUNE_NCCL_LIB")) {
    found.library = *named;
    found.how = "NCCL_AUTOTUNE_NCCL_LIB";
  } else {
    std::set<fs::path> seen;
    for (const auto& [dir, how] : nccl_search_path(env, root)) {
      if (!seen.insert(dir).second) continue;
      std::error_code ec;
      if (fs::is_regular_file(dir / "libnccl.so.2", ec)) {
        found.library = dir / "libnccl.so.2";
        found.how = how;
        break;
      }
    }
    if (!found.library) {
      found.how = "no libnccl.so.2 on LD_LIBRARY_PATH, in the Python environment or the system's directories";
      return found;
    }
  }
  found.version = nccl::library_file_version(*found.library, &why);
  if (!found.version) found.how += "; " + why;
  return found;
}

}  // namespace autotune::launcher
