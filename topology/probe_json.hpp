#pragma once
// The probe's JSON record of a node (`probe --format json`): everything the model holds, health readings
// included, so that `probe --input` of the record reads back the same node (same fingerprint, analysis
// and findings) and a recorded unhealthy node can stand in for a live one. Internal to topology/ (it
// exposes nlohmann::json); the public entry points are to_json (output.hpp) and read_topology_file.
// Pure functions: thread-safe.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "topology/model.hpp"

namespace autotune::topology::detail {

// Adds the model's fields to `out` (an object): origin, gpus, nics, nvswitches, sources, readings.
void write_topology_json(const Topology& t, nlohmann::json& out);

// Reads a record back. Throws InputError(file, line, ...) for malformed JSON, a JSON document that is not
// a probe record, or a field of the wrong type or value (the line is the field's).
Topology read_probe_json(std::string_view text, const std::string& file);

// The line (1-based) on which the value at a JSON pointer ("/gpus/2/sm") starts in `text`, a valid JSON
// document; 0 when there is no such value.
int json_pointer_line(std::string_view text, std::string_view pointer);

}  // namespace autotune::topology::detail
