#include "tuner/plugin_locator.hpp"

#include <system_error>

namespace autotune::tuner {

std::filesystem::path executable_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : p;
}

std::optional<std::filesystem::path> locate_plugin(const std::filesystem::path& exe) {
  if (exe.empty()) return std::nullopt;
  const auto dir = exe.parent_path();
  // Build tree: <build>/cli/nccl-autotune and <build>/plugins/; tests live one level deeper
  // (<build>/tests/<module>/), so look two levels up as well. Installed: <prefix>/bin -> <prefix>/lib*.
  const std::filesystem::path candidates[] = {
      dir / ".." / "plugins" / kPluginFileName,
      dir / ".." / ".." / "plugins" / kPluginFileName,
      dir / ".." / "lib" / kPluginFileName,
      dir / ".." / "lib64" / kPluginFileName,
      dir / ".." / "lib" / "x86_64-linux-gnu" / kPluginFileName,
      dir / ".." / "lib" / "aarch64-linux-gnu" / kPluginFileName,
  };
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return std::filesystem::weakly_canonical(c, ec);
  }
  return std::nullopt;
}

}  // namespace autotune::tuner
