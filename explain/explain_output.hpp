#pragma once
// An Explanation (explain.hpp) for people and for programs: a text table per collective (one line per size
// range: first and last byte, exact, with a rounded reading; who decides; algorithm/protocol; channels;
// chunk), and the same as JSON. Modelled decisions (NCCL's own, from the simulator) are labelled as such in
// both. Pure functions; thread-safe.

#include <string>

#include "explain/explain.hpp"

namespace autotune::explain {

std::string format_text(const Explanation& e);
std::string format_json(const Explanation& e);

}  // namespace autotune::explain
