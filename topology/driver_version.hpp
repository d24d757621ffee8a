#pragma once
// The NVIDIA kernel driver's version as the loaded module states it (<sysfs>/module/nvidia/version,
// "550.54.15"): what `verify`'s timer compares with the version recorded at the last verify, since a driver
// upgrade can change what NCCL's choices reach. `sysfs_root` is a seam for tests (a recorded tree).
// Thread-safe.

#include <filesystem>
#include <string>

namespace autotune::topology {

// Empty when the module is not loaded (no GPU driver on this node) or the file cannot be read.
std::string nvidia_driver_version(const std::filesystem::path& sysfs_root = "/sys");

}  // namespace autotune::topology
