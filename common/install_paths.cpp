#include "common/install_paths.hpp"

#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace autotune {
namespace fs = std::filesystem;

namespace {

fs::path self_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
  return exe;
}

}  // namespace

std::vector<fs::path> library_candidates(const std::string& file_name, const PluginSearch& search) {
  std::optional<std::string> override_dir = search.plugin_dir_override;
  if (!override_dir) {
    if (const char* v = std::getenv("NCCL_AUTOTUNE_PLUGIN_DIR"); v && *v) override_dir = v;
  }
  if (override_dir) return {fs::absolute(fs::path(*override_dir) / file_name).lexically_normal()};

  // Resolve symbolic links first: a /usr/local/bin/nccl-autotune link into a prefix must find that prefix.
  fs::path exe = search.executable.empty() ? self_executable() : search.executable;
  std::error_code ec;
  if (fs::path real = fs::canonical(exe, ec); !ec) exe = real;
  const fs::path dir = fs::absolute(exe).parent_path();
  std::vector<fs::path> out;
  // The install's own libdir (AUTOTUNE_INSTALL_LIBDIR, relative to the prefix) first, then the usual ones.
  for (const char* libdir : {AUTOTUNE_INSTALL_LIBDIR, "lib", "lib64"}) {
    fs::path p = (dir / ".." / libdir / file_name).lexically_normal();
    bool seen = false;
    for (const auto& q : out) seen = seen || q == p;
    if (!seen) out.push_back(p);
  }
  out.push_back((dir / ".." / "plugins" / file_name).lexically_normal());
  return out;
}

fs::path find_library(const std::string& file_name, const std::string& what, const PluginSearch& search) {
  const std::vector<fs::path> candidates = library_candidates(file_name, search);
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c;
  }
  std::string looked;
  for (const auto& c : candidates) looked += (looked.empty() ? "" : ", ") + c.string();
  throw std::runtime_error(what + " " + file_name + " not found (looked at " + looked +
                           "; set NCCL_AUTOTUNE_PLUGIN_DIR to its directory)");
}

}  // namespace autotune
