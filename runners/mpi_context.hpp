#pragma once
// The processes of one measurement job. Under mpirun/srun (one process per GPU, any number of nodes) it is
// MPI_COMM_WORLD: MPI is initialised on first use and finalised at exit. Started any other way, or built
// without MPI, it is a single process of rank 0. Rank 0 reports; the others stay quiet.
// Collective operations must be called by every process in the same order (MPI's rule). Not thread-safe:
// call from the main thread only.

#include <cstddef>
#include <span>

namespace autotune::runners {

class MpiContext {
 public:
  // The job's context. Initialises MPI when this process was started by an MPI or Slurm launcher.
  static MpiContext& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank among the processes on this node: picks the GPU.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool is_root() const { return rank_ == 0; }
  bool distributed() const { return size_ > 1; }

  // Element-wise over all processes, in place.
  void allreduce_max(std::span<double> values) const;
  void allreduce_sum(std::span<double> values) const;
  void allreduce_min(std::span<int> values) const;
  // Copies root's bytes to every process.
  void broadcast(std::span<std::byte> bytes, int root = 0) const;
  void barrier() const;

  // Whether this process was started by a launcher (OpenMPI, MPICH/PMI, PMIx, Slurm's srun).
  static bool launched_by_mpi();

 private:
  MpiContext();
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace autotune::runners
