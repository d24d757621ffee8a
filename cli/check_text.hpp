#pragma once
// check's report for people: one table row per node (status, its all-reduce, its slowest GPU pair and rail,
// its findings' devices), the medians and the hardware's figures, then every finding in one line.

#include <string>

#include "check/check.hpp"

namespace autotune::cli {

std::string check_text(const check::CheckReport& report);

}  // namespace autotune::cli
