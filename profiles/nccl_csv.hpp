#pragma once
// NCCL's example tuner plugin configuration (plugins/tuner/example in NCCL, ext-tuner/example before 2.29.7),
// read as that plugin reads it:
//   collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
// one rule per line (8, 9 or 10 fields), inclusive byte ranges; -1 = any for nNodes, nRanks, numPipeOps and
// regBuff, and "keep NCCL's" for channels (0 too: the example writes it and NCCL reads 0 as its own choice);
// max_bytes -1 is the largest size (the example's strtoull reads it so); '#' comments and blank lines. Names
// as that plugin spells them, in lower case: allreduce, collnet_direct, nvls_tree, ll128. The rules keep file
// order: the first line that matches a call wins (RuleTable chains them that way).
//
// A line the example would not run as written is skipped with a reason, and the rest still apply: a wrong
// field count, a name it does not know (the example silently reads it as allreduce, ring or simple), a number
// that is not one (the example reads a prefix or 0), a condition no call can meet (nNodes 0, regBuff 2,
// min_bytes above max_bytes), or channels outside -1..64. A line naming a combination NCCL never runs
// (broadcast with tree) is kept, as the example keeps it: it never applies because NCCL's cost table marks
// that entry unusable, and a later line for the same bytes applies instead.
//
// Export writes 8 fields, or 10 for a rule with numPipeOps or regBuff conditions, and drops the evidence
// (busbw, samples); it expands a bounded nodes/ranks/pipe_ops range into one row per value (at most 4096 rows
// per rule). An open-ended range ("16+") and a chunk size cannot be written as rows and are refused.
// Pure functions; thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::profiles {

// A line NCCL's example plugin would not run as written.
struct CsvSkipped {
  int line = 0;
  std::string message;  // "algorithm: expected one of ...; found \"Tree\""
};

struct CsvRules {
  std::vector<Rule> rules;  // file order; source_line set
  std::vector<CsvSkipped> skipped;
};

// Never throws for the file's content.
CsvRules read_nccl_csv(std::string_view text);

// read_nccl_csv for a tool that must refuse bad input: throws InputError(file_name, line, ...) for the first
// skipped line.
std::vector<Rule> parse_nccl_csv(std::string_view text, std::string_view file_name);

// Takes out of `rules` those NCCL never runs (names it does not allow together, vocabulary.hpp), which a TOML
// profile cannot hold, and says why for each.
std::vector<CsvSkipped> drop_combinations_nccl_never_runs(std::vector<Rule>& rules);

// A header comment, then one row per rule (sorted as the profile writes them). Throws InputError for a rule
// that cannot be written.
std::string format_nccl_csv(const std::vector<Rule>& rules);

}  // namespace autotune::profiles
