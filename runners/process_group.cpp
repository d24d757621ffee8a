#include "runners/process_group.hpp"

#include <cstdint>
#include <cstdlib>

#include "runners/modules.hpp"

namespace autotune::runners {

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(name)) return true;
  }
  // srun without an MPI launcher still sets SLURM_STEP_NUM_TASKS; MPI's PMI plugin then wires it up.
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  return tasks && std::atoi(tasks) > 1;
}

std::string broadcast_text(const ProcessGroup& processes, std::string text, int root) {
  if (!processes.distributed()) return text;
  uint64_t length = text.size();
  processes.broadcast(std::as_writable_bytes(std::span<uint64_t>(&length, 1)), root);
  text.resize(length);
  processes.broadcast(std::as_writable_bytes(std::span<char>(text.data(), text.size())), root);
  return text;
}

const ProcessGroup& job_processes() {
  static const SingleProcess alone;
  if (!launched_by_mpi()) return alone;
  static const ProcessGroup& world = load_mpi_module().world();
  return world;
}

}  // namespace autotune::runners
