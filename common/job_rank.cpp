#include "common/job_rank.hpp"

#include <cstdlib>

namespace autotune {

std::optional<std::string> job_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return std::string(v);
  return std::nullopt;
}

bool is_first_rank() {
  const auto rank = job_rank();
  return !rank || *rank == "0";
}

}  // namespace autotune
