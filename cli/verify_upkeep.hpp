#pragma once
// `verify --if-changed` and the store's record of each verify (profiles/upkeep_record.hpp): the versions
// this node runs (the job's libnccl as the launcher finds it, the NVIDIA driver) compared with those recorded
// at the cluster's last verify, so that a timer verifies after an upgrade and not on a blind schedule.

#include <filesystem>
#include <optional>
#include <string>

#include "calibrate/verify.hpp"

namespace autotune::cli {

struct NodeVersions {
  std::string nccl;    // "2.28.9", or "" when no libnccl is found
  std::string driver;  // "550.54.15", or "" without the driver
};
NodeVersions node_versions();

// Why nothing needs verifying ("NCCL 2.28.9 and driver 550.54.15, as at the last verify (2026-...)"), or
// nullopt when the cluster was never verified or a version differs.
std::optional<std::string> unchanged_since_last_verify(const std::filesystem::path& store,
                                                       const std::string& cluster, const NodeVersions& now);

// Records the verify's outcome (ok: no rule now loses, and something was checked) with the versions. A
// record that cannot be written is a warning on stderr: the verify's own result stands.
void record_verify(const std::filesystem::path& store, const std::string& cluster,
                   const calibrate::VerifyResult& result, bool nothing_checked, const NodeVersions& versions);

}  // namespace autotune::cli
