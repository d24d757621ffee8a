#pragma once
// The real world behind the launcher's Services: the validating profile reader, the profile store, the
// live probe's fingerprint through the per-boot cache, and the plugin next to this executable.

#include <string>

#include "launcher/launch_plan.hpp"

namespace autotune::launcher {

// The key a cached fingerprint is valid for: the NCCL major.minor it was computed for and this tool's
// version (a newer tool may fingerprint differently).
std::string fingerprint_cache_key();

// NCCL major*100+minor the fingerprint is made for: the NCCL this tool was built with (228 for 2.28.x).
int fingerprint_nccl_major_minor();

// This node's fingerprint through the cache (probing the live node on a miss).
FingerprintLookup node_fingerprint();

Services default_services();

}  // namespace autotune::launcher
