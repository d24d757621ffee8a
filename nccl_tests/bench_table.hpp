#pragma once
// `nccl-autotune bench`'s arithmetic and output, kept out of the CLI: nccl-tests' size syntax and size
// sweep (-b 8 -e 8G -f 2), and the results as nccl-tests 2.19's table or as JSON. The table is the one
// nccl-tests prints, test by test (one per collective): `# Collective test starting:`, the out-of-place and
// in-place halves (size, count, type, redop, root, then time, algbw, busbw, #wrong per half, in nccl-tests'
// column widths), `# Out of bounds values`, `# Avg bus bandwidth`, `# Collective test concluded:`; plus one
// column of what NCCL ran (algo/proto/channels) and a header line saying the ranks, nodes, what was forced
// and whether it was simulated, which import-nccl-tests reads back. Pure functions.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runners/runner.hpp"

namespace autotune::nccl_tests {

// min, min*factor, ... up to and including max (nccl-tests' -b/-e/-f). Throws InputError when min is 0,
// min > max or factor < 2.
std::vector<uint64_t> size_sweep(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor);

// One size, measured as nccl-tests does: out-of-place, then in-place (each by its own runner).
struct BenchRow {
  runners::Measurement out_of_place;
  runners::Measurement in_place;
};

// nccl-tests' layout; rows of one operation are one test (alltoall and sendrecv print N/A for the in-place
// #wrong, as nccl-tests does: it does not check their in-place halves). The header says "# simulated" loudly
// when info.source is "simulated". A half that did not measure prints "-" and its outcome in the last column,
// with the reason on a comment line below; a wrong half prints #wrong 1 (the runner does not count the
// elements across ranks) and the reason likewise.
std::string format_table(const runners::RunnerInfo& info, std::span<const BenchRow> rows);
// Every half as one result ("half": "out_of_place" or "in_place"), in the table's order.
std::string format_json(const runners::RunnerInfo& info, std::span<const BenchRow> rows);

// nccl-tests' program for an operation: "all_reduce_perf", "alltoall_perf", "sendrecv_perf".
std::string_view nccl_tests_program(nccl::Operation op);

}  // namespace autotune::nccl_tests
