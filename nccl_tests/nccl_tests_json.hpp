#pragma once
// nccl-tests' JSON output (`-J FILE`, nccl-tests 2.18 to 2.19.6: format versions 1 to 3) read into the same
// NcclTestsLog as a text log: `args` (args[0] names the program), `env` (NCCL_ALGO/NCCL_PROTO as the job
// exported them), `nccl_version`, `config` (threads, GPUs, sizes, iterations, validation, graph, one
// `devices` entry per process: rank, hostname, device, device_hex, device_info), `results` (size, count,
// type, redop, root, and per half `time` or `cpu_time`, `alg_bw`, `bus_bw`, `nwrong`; NaN written as "nan"),
// `out_of_bounds`, `average_bus_bandwidth`, `errors`. Several documents may follow one another in one file
// (outputs concatenated): each is one test. The whole of a document is one line, as nccl-tests writes it.
//
// Pure functions: no state, safe from any thread.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl_tests/nccl_tests_log.hpp"

namespace autotune::nccl_tests {

// True when the text is JSON rather than a text log (its first non-blank character is '{').
bool looks_like_json(std::string_view text);

// Every document in the text, in order. `collective` wins over args[0] and the file name, as for text logs.
// Throws InputError(file, line, ...) for text that is not JSON, a document that is not nccl-tests' (no
// `version`/`results`), a version other than 1 to 3, a field of the wrong type, no result, or a collective
// that cannot be told.
std::vector<NcclTestsLog> parse_nccl_tests_json(std::string_view text, const std::string& file,
                                                std::optional<std::string> collective = std::nullopt);

}  // namespace autotune::nccl_tests
