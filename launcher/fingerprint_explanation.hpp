#pragma once
// What `probe --explain-fingerprint` says: the facts this node's fingerprint hashes, made for the NCCL the
// job would load (found as the launcher finds it), and, against a profile, whether the profile's fingerprint
// is this node's and which facts differ. For the operator whose job was refused with "fingerprint
// mismatch": the refusal names two hashes, this names what lies behind them. Pure functions.

#include <optional>
#include <string>
#include <vector>

#include "launcher/job_nccl.hpp"
#include "profiles/profile.hpp"
#include "topology/model.hpp"

namespace autotune::launcher {

struct FingerprintAgainst {
  std::string profile;  // its path
  std::string fingerprint;
  bool matches = false;
  bool has_facts = false;                // profiles written before facts were kept have none
  std::vector<std::string> differences;  // topology::fingerprint_differences, when it has facts
};

struct FingerprintExplanation {
  int nccl_major_minor = 0;
  std::string nccl_from;  // "2.28.9 (/usr/lib/libnccl.so.2, through LD_LIBRARY_PATH)" or what was assumed
  std::string fingerprint;
  std::vector<std::string> facts;
  std::optional<FingerprintAgainst> against;
};

// `built_major_minor` is assumed when the job's NCCL cannot be found or read.
FingerprintExplanation explain_fingerprint(const topology::Topology& node, const JobNccl& nccl,
                                           int built_major_minor);
void compare_with(FingerprintExplanation& e, const profiles::Profile& profile, const std::string& path);

std::string to_text(const FingerprintExplanation& e);
std::string to_json(const FingerprintExplanation& e);  // pretty-printed, ends with a newline

}  // namespace autotune::launcher
