#pragma once
// check's JSON (`check --format json`): the status, the passes, the medians, the fabric settings the nodes
// agree on, and a `nodes` list, each entry with its `node` index, `host`, `status` (ok, warn, block), its
// `findings` (each naming its `device`) and its figures. Read back by tune when check ran as a job of its
// own (the orchestrator on GPUs). Pure functions.

#include <string>
#include <string_view>

#include "check/check.hpp"
#include "check/cluster_health.hpp"

namespace autotune::check {

// Pretty-printed, ends with a newline; "schema": 1.
std::string to_json(const CheckReport& report);

// The nodes' health and agreed fabric settings from check's JSON. Throws InputError(file, 0, ...) for text
// that is not check's JSON.
check::ClusterHealth read_check_json(std::string_view text, const std::string& file);

}  // namespace autotune::check
