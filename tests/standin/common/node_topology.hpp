#pragma once
// Which recorded node the stand-ins pretend to run on: NCCL_STANDIN_TOPOLOGY (an hwloc or NCCL topology XML
// file) or NCCL_STANDIN_EXAMPLE (a bundled example's name); with neither, the h100-8x example. The CUDA
// stand-in takes its devices from it and the NCCL stand-in its cost model, each reading it once per process.
// Thread-safe: read on first use, immutable after.

#include "common/input_error.hpp"
#include "topology/model.hpp"

namespace autotune::standin {

// Exits through exit_bad_input() when the variables name no readable node.
const topology::Topology& node_topology();

// How a stand-in meets a bad NCCL_STANDIN_* value: one stderr line "nccl-standin: <file:line: what>" and exit
// status 2 before any work is done, as every bad input in this project is met. (A library cannot return
// InputError through the C APIs it imitates.)
[[noreturn]] void exit_bad_input(const InputError& e);

}  // namespace autotune::standin
