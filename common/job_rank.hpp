#pragma once
// Which rank of a parallel job this process is, as the launcher (mpirun, srun, a PMI/PMIx runtime) tells it
// through the environment; for saying a job-wide thing once, not once per rank. Thread-safe (reads the
// environment only).

#include <optional>
#include <string>

namespace autotune {

// The value of the first of OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID that is set and not
// empty; nullopt outside such a job.
std::optional<std::string> job_rank();

// Whether this process speaks for the job: rank 0, or not started as one rank of many.
bool is_first_rank();

}  // namespace autotune
