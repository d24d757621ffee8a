#pragma once
// This machine's host name (gethostname), as the commands that name a cluster or a node print it. Empty
// when the system will not say. Thread-safe.

#include <string>

namespace autotune {

std::string host_name();

}  // namespace autotune
