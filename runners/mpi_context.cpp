#include "runners/mpi_context.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

#ifdef AUTOTUNE_WITH_MPI
// The C API only: OpenMPI's header otherwise drags in its C++ bindings, which need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace autotune::runners {

namespace {

#ifdef AUTOTUNE_WITH_MPI
void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
}
#endif

}  // namespace

bool MpiContext::launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(name)) return true;
  }
  // srun without an MPI launcher still sets SLURM_STEP_NUM_TASKS; MPI's PMI plugin then wires it up.
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  return tasks && std::atoi(tasks) > 1;
}

MpiContext& MpiContext::world() {
  static MpiContext context;
  return context;
}

#ifdef AUTOTUNE_WITH_MPI

MpiContext::MpiContext() {
  if (!launched_by_mpi()) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_mpi_ = true;
  }
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

MpiContext::~MpiContext() {
  if (!owns_mpi_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiContext::allreduce_max(std::span<double> values) const {
  if (size_ == 1 || values.empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD),
        "MPI_Allreduce(max)");
}

void MpiContext::allreduce_sum(std::span<double> values) const {
  if (size_ == 1 || values.empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD),
        "MPI_Allreduce(sum)");
}

void MpiContext::allreduce_min(std::span<int> values) const {
  if (size_ == 1 || values.empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT, MPI_MIN,
                      MPI_COMM_WORLD),
        "MPI_Allreduce(min)");
}

void MpiContext::broadcast(std::span<std::byte> bytes, int root) const {
  if (size_ == 1 || bytes.empty()) return;
  check(MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void MpiContext::barrier() const {
  if (size_ > 1) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

#else  // built without MPI: one process

MpiContext::MpiContext() {
  // Several processes started by a launcher would each think they are rank 0 and all report: refuse.
  if (launched_by_mpi())
    throw std::runtime_error("started by an MPI launcher, but nccl-autotune was built without MPI");
}
MpiContext::~MpiContext() = default;
void MpiContext::allreduce_max(std::span<double>) const {}
void MpiContext::allreduce_sum(std::span<double>) const {}
void MpiContext::allreduce_min(std::span<int>) const {}
void MpiContext::broadcast(std::span<std::byte>, int) const {}
void MpiContext::barrier() const {}

#endif

}  // namespace autotune::runners
