#pragma once
// NCCL's example tuner plugin configuration (plugins/tuner/example in NCCL):
// collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
// one rule per line, inclusive byte ranges, -1 = any (channels -1 = NCCL decides), '#' comments, blank lines.
// Names as that plugin spells them: allreduce, collnet_direct, nvls_tree, ll128.
//
// Import refuses rows that condition on numPipeOps or regBuff (anything but -1): the profile model has no
// such conditions, and dropping them would apply the rule where its author did not mean it to. Export drops
// the evidence (busbw, samples) and expands a bounded nodes/ranks range into one row per value (at most 4096
// rows per rule); an open-ended range ("16+") cannot be written as rows and is refused.

#include <string>
#include <string_view>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::profiles {

// Throws InputError(file_name, line, ...) for the first bad row.
std::vector<Rule> parse_nccl_csv(std::string_view text, std::string_view file_name);
// A header comment, then one row per rule (sorted as the profile writes them). Throws InputError for a rule
// that cannot be written.
std::string format_nccl_csv(const std::vector<Rule>& rules);

}  // namespace autotune::profiles
