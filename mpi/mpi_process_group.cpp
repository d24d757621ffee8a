#include "mpi/mpi_process_group.hpp"

#include <stdexcept>
#include <string>

// The C API only: Open MPI's header otherwise drags in its C++ bindings, which need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "runners/modules.hpp"

namespace autotune::mpi {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
}

}  // namespace

const MpiProcessGroup& MpiProcessGroup::world() {
  static MpiProcessGroup group;
  return group;
}

MpiProcessGroup::MpiProcessGroup() {
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

MpiProcessGroup::~MpiProcessGroup() {
  if (!owns_mpi_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiProcessGroup::allreduce_max(std::span<double> values) const {
  if (size_ == 1 || values.empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD),
        "MPI_Allreduce(max)");
}

void MpiProcessGroup::allreduce_sum(std::span<double> values) const {
  if (size_ == 1 || values.empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD),
        "MPI_Allreduce(sum)");
}

void MpiProcessGroup::allreduce_min(std::span<int> values) const {
  if (size_ == 1 || values.empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT, MPI_MIN,
                      MPI_COMM_WORLD),
        "MPI_Allreduce(min)");
}

void MpiProcessGroup::broadcast(std::span<std::byte> bytes, int root) const {
  if (size_ == 1 || bytes.empty()) return;
  check(MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void MpiProcessGroup::barrier() const {
  if (size_ > 1) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

}  // namespace autotune::mpi

// The module's one export (runners/modules.hpp).
extern "C" __attribute__((visibility("default"))) const autotune::runners::MpiModule*
nccl_autotune_mpi_module() {
  static const autotune::runners::MpiModule table{
      autotune::runners::kModuleAbi,
      []() -> const autotune::runners::ProcessGroup& { return autotune::mpi::MpiProcessGroup::world(); }};
  return &table;
}
