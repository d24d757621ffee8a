#pragma once
// Joining calibrations of one cluster into one profile: the rules of shapes calibrated apart (a 1x8 and a 2x1
// calibration, or `tune` adding shapes to a profile) and nothing that would change what either measured. Two
// profiles join only when they describe the same kind of node (fingerprint), the same NCCL major.minor, the
// same source, the same process-wide settings ([env]: every rule was measured under them) and the same
// constants; their rules join when no call could match a rule of each that decides differently. Pure.

#include <string>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::profiles {

struct MergeSide {
  const Profile& profile;
  std::string name;  // the file, for messages
};

// The joined profile: `first`'s cluster, policy and constants, both sides' rules (a rule both hold once) and
// layouts (join_layouts), nodes the larger of the two; provenance from `first` but for `command` and
// `created`, which the caller sets. Throws InputError (file = the side that conflicts, line = its rule's line
// when known) naming both sides of the first conflict.
Profile merge_profiles(const MergeSide& first, const MergeSide& second);

// The same decision for the same calls: everything but the evidence and where it was read.
bool same_decision(const Rule& a, const Rule& b);

}  // namespace autotune::profiles
