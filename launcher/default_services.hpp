#pragma once
// The real world behind the launcher's Services: the validating profile reader, the profile store, the
// live probe's fingerprint through the per-boot cache, and the plugin next to this executable.

#include <string>

#include "launcher/launch_plan.hpp"

namespace autotune::launcher {

// The key a cached fingerprint is valid for: the NCCL major*100+minor it was computed for and this tool's
// version (a newer tool may fingerprint differently).
std::string fingerprint_cache_key(int nccl_major_minor);

// The NCCL this tool was built with, as major*100+minor (228 for 2.28.x).
int built_nccl_major_minor();

// This node's fingerprint for that NCCL through the cache (probing the live node on a miss).
FingerprintLookup node_fingerprint(int nccl_major_minor);

Services default_services();

}  // namespace autotune::launcher
