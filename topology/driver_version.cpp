#include "topology/driver_version.hpp"

#include <fstream>

namespace autotune::topology {

std::string nvidia_driver_version(const std::filesystem::path& sysfs_root) {
  std::ifstream in(sysfs_root / "module" / "nvidia" / "version");
  std::string version;
  if (!in || !std::getline(in, version)) return "";
  while (!version.empty() && (version.back() == ' ' || version.back() == '\r')) version.pop_back();
  return version;
}

}  // namespace autotune::topology
