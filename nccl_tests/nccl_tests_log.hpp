#pragma once
// One test of an nccl-tests log: the text that all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf, gather_perf and scatter_perf print (header,
// result table, footer), in the formats of nccl-tests 2.0 to 2.19: the old `error` column (largest difference
// from the expected value) and the newer `#wrong` (count of wrong elements), with or without `redop`/`root`
// columns, the `Group` column of the rank lines, per-iteration and timestamp columns, and the table
// `nccl-autotune bench` prints (the same, plus an algo/proto/channels column). NCCL_DEBUG lines and other
// noise may be interleaved anywhere, even in the middle of a row, and the log may stop mid-table (a job
// killed or timed out): what was printed is kept and the cut is reported as a warning. A file holding several
// tests is split by nccl_tests_file.hpp; -J JSON output is read by nccl_tests_json.hpp into the same
// structure.
//
// Pure functions over text: no state, safe to call from any thread.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/input_file.hpp"
#include "nccl/operation.hpp"
#include "nccl/vocabulary.hpp"

namespace autotune::nccl_tests {

// One "#  Rank  3 Group  0 Pid  4242 on node01 device  3 [0000:3b:00] NVIDIA H100 80GB HBM3" line.
struct NcclTestsRank {
  int rank = 0;
  int pid = 0;
  std::string host;
  int device = 0;
  std::string bus_id;  // as printed: "0x3b" (old) or "0000:3b:00" (new)
  std::string gpu_name;
};

struct NcclTestsHeader {
  std::string program;        // "all_reduce_perf", when the log names it (nccl-tests >= 2.17)
  std::string tests_version;  // "2.19.6", when printed
  int nccl_library = 0;       // NCCL version code of the library the test ran with (22809), when printed
  int threads = 1;            // nThread
  int gpus_per_thread = 1;    // nGpus
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t step = 0;
  bool step_is_factor = true;
  int warmup_iters = 0;
  int iters = 0;
  int validation = -1;  // -1 = not printed
  int graph = 0;        // CUDA graph launches (nccl-tests -G)
  std::vector<NcclTestsRank> ranks;
  std::vector<std::string> columns;  // the table's column names as printed ("size", "count", ..., "#wrong")
  bool old_error_column = false;     // `error` (max delta) instead of `#wrong`
};

// One half of a row: out-of-place or in-place.
struct NcclTestsResult {
  double time_us = 0.0;
  double algbw_gbps = 0.0;
  double busbw_gbps = 0.0;
  // `#wrong` elements, or the `error` delta in old logs; nullopt when printed "N/A" (validation off).
  std::optional<double> check;
  bool wrong = false;  // the check failed (wrong elements, or a delta above nccl-tests' own tolerance)
};

struct NcclTestsRow {
  int line = 0;  // where the row started in the log
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::string type;   // "float"
  std::string redop;  // "sum", "none", "" when the column is absent
  int root = -1;
  NcclTestsResult out_of_place;
  NcclTestsResult in_place;
  std::string used;  // bench's algo/proto/channels column: what NCCL ran ("ring/simple/ch8"); "" without it
  bool wrong() const { return out_of_place.wrong || in_place.wrong; }
};

struct NcclTestsFooter {
  std::optional<int> out_of_bounds;      // "# Out of bounds values : 0 OK"
  std::optional<double> avg_busbw_gbps;  // "# Avg bus bandwidth    : 12.3"
};

struct NcclTestsWarning {
  int line = 0;
  std::string text;
};

struct NcclTestsLog {
  std::string file;
  int first_line = 1;  // the lines of the file this test spans (a file may hold several tests)
  int last_line = 0;
  NcclTestsHeader header;
  std::vector<NcclTestsRow> rows;
  NcclTestsFooter footer;
  bool truncated = false;  // no footer: the log stops mid-table
  std::vector<NcclTestsWarning> warnings;

  // "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv", "gather",
  // "scatter"; from the
  // program line, the file name or the table's shape (see parse_nccl_tests_log).
  std::string collective;
  // What NCCL printed with NCCL_DEBUG=INFO, when it did.
  std::string nccl_version;              // "2.28.9"
  std::optional<std::string> env_algo;   // value of "NCCL_ALGO set by environment to ..."
  std::optional<std::string> env_proto;  // value of "NCCL_PROTO set by environment to ..."
  std::optional<int> nccl_nodes;         // "nNodes N" in NCCL's init line

  // What the log states outright rather than through rank lines: nccl-tests' JSON (devices x threads x
  // GPUs), the header `nccl-autotune bench` prints.
  std::optional<int> stated_ranks;
  std::optional<int> stated_nodes;
  std::optional<std::string> forced;  // bench: the candidate it forced ("default", "ring/simple/ch8")
  std::string source;  // bench: "measured", "simulated" or "standin"; empty for nccl-tests' own logs

  // The ranks that ran: stated, else the rank lines; 0 when the log shows neither (a table alone).
  int ranks() const;
  // Distinct host names in the rank lines; 0 when the log has none.
  int hosts() const;
  // The NCCL collective, nullopt for alltoall, sendrecv, gather and scatter (point-to-point: NCCL's tuner
  // never sees them).
  std::optional<nccl::Collective> nccl_collective() const;
  // What the test measured, collective or point-to-point.
  std::optional<nccl::Operation> operation() const;
  // "all_reduce_perf.log:12-40 (all_reduce_perf)": the test, for messages.
  std::string name() const;
};

// Parses the text of one test. `file` names it in errors and warnings and, when the log does not print its
// program name (`# Collective test starting:`, a `Running: ... all_gather_perf` line), its file name
// ("all_gather_perf.log") tells the collective; `collective` (a name above), when given, wins over both.
// `first_line` is the file line the text starts at. Throws InputError(file, line, ...) when the text is not
// nccl-tests output, when it stops before the first result row, or when the collective cannot be told.
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file,
                                  std::optional<std::string> collective = std::nullopt, int first_line = 1);

// A log may be piped in ("-" or `<(all_reduce_perf ...)`); the cap is far beyond any real run's output.
inline constexpr InputKind kLogInput{"an nccl-tests log", uint64_t{4} << 30, /*pipe_allowed=*/true};

// Reads and parses a file holding one test (InputError when it cannot be read).
NcclTestsLog read_nccl_tests_log(const std::filesystem::path& path,
                                 std::optional<std::string> collective = std::nullopt);

// A line without the prefix a launcher adds to each line of output: `mpirun --tag-output` ("[1,0]<stdout>:")
// and `srun --label` ("3: ").
std::string_view strip_launcher_prefix(std::string_view line);

// The line `nccl-autotune bench` prints in each test's header, which this parser reads back: "# nccl-autotune
// bench: ranks 16 nodes 2 forced ring/simple source measured nccl 2.28.9".
std::string bench_header_line(int ranks, int nodes, const std::string& forced, const std::string& source,
                              const std::string& nccl_version);

// The canonical collective name for an nccl-tests name or program ("all_reduce_perf", "AllReduce",
// "reduce_scatter" -> "reducescatter", "gather_perf" -> "gather"); nullopt when it is none of the nine.
std::optional<std::string> nccl_tests_collective_name(std::string_view text);

}  // namespace autotune::nccl_tests
