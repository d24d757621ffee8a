#pragma once
// `nccl-autotune bench`'s arithmetic and output, kept out of the CLI: nccl-tests' size syntax and size
// sweep (-b 8 -e 8G -f 2), and the results as nccl-tests' table (size, count, type, redop, root, time, algbw,
// busbw, #wrong, plus what NCCL used) or as JSON. Pure functions.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runners/runner.hpp"

namespace autotune::nccl_tests {

using runners::Measurement;
using runners::RunnerInfo;

// "8", "64K", "1M", "8G" (binary multiples, as in nccl-tests). Throws InputError(context, 0, ...) otherwise.
uint64_t parse_size(std::string_view text, const std::string& context = "<argument>");

// min, min*factor, ... up to and including max (nccl-tests' -b/-e/-f). Throws InputError when min is 0,
// min > max or factor < 2.
std::vector<uint64_t> size_sweep(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor);

// nccl-tests' layout. The header says "# simulated" loudly when info.source is "simulated".
std::string format_table(const RunnerInfo& info, std::span<const Measurement> results);
std::string format_json(const RunnerInfo& info, std::span<const Measurement> results);

}  // namespace autotune::nccl_tests
