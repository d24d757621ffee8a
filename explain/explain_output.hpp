#pragma once
// An Explanation (explain.hpp), or one per kind of a layout (explain_layout.hpp), for people and for
// programs: a text table per collective (one line per size range: first and last byte, exact, with a rounded
// reading; who decides; algorithm/protocol; channels; chunk), and the same as JSON. Modelled decisions
// (NCCL's own, from the simulator) are labelled as such in both. Pure functions; thread-safe.

#include <string>

#include "explain/explain.hpp"
#include "explain/explain_layout.hpp"

namespace autotune::explain {

std::string format_text(const Explanation& e);
std::string format_json(const Explanation& e);

// Every kind of a layout: a heading per kind ("tensor parallel, 4 groups of 1x8: allreduce, ..."), its
// collectives as format_text gives them, and for its point-to-point operations that no per-call rule exists.
std::string format_layout_text(const LayoutExplanation& e);
std::string format_layout_json(const LayoutExplanation& e);

}  // namespace autotune::explain
