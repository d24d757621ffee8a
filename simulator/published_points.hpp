#pragma once
// The published nccl-tests figures the simulated truth is fitted to and held to (simulator/published/
// points.csv, embedded at build time so that `bench --simulate` can show them anywhere): one measured busbw
// per machine, scale, collective, size and, where the source forced one, algorithm, each with its source.
// Value types and pure functions: thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl/vocabulary.hpp"

namespace autotune::sim {

struct PublishedPoint {
  std::string machine;  // the bundled example it was measured on (topology/examples)
  int nodes = 1;
  int gpus_per_node = 0;  // how many of each node's GPUs the job used
  nccl::Collective collective = nccl::Collective::allreduce;
  uint64_t bytes = 0;                        // nccl-tests size
  std::optional<nccl::Algorithm> algorithm;  // what the source forced (NCCL_ALGO); nullopt: NCCL's choice
  std::map<std::string, std::string> env;    // what else the source set (NCCL_NVLS_ENABLE=0)
  double busbw_gbps = 0.0;                   // as published
  std::string source;
  int line = 0;  // in the file, for messages
};

// The bundled file's points, in file order.
const std::vector<PublishedPoint>& published_points();

// Reads the file format (comment lines '#', a header line, then
// machine,nodes,gpus,collective,bytes,algorithm,env,busbw_gbps,source). Throws InputError(file, line, ...)
// naming the column and what was expected.
std::vector<PublishedPoint> parse_published_points(std::string_view text, const std::string& file);

}  // namespace autotune::sim
