#pragma once
// The job's processes as MPI_COMM_WORLD (runners/process_group.hpp): MPI is initialised when the world is
// first asked for and finalised at exit; local ranks come from MPI's shared-memory split. Built into the MPI
// module (libnccl-autotune-mpi.so), never linked into nccl-autotune itself. Not thread-safe (MPI is
// initialised MPI_THREAD_FUNNELED: the main thread calls it).

#include "runners/process_group.hpp"

namespace autotune::mpi {

class MpiProcessGroup final : public runners::ProcessGroup {
 public:
  // The process's one world. Throws std::runtime_error when MPI cannot be initialised.
  static const MpiProcessGroup& world();

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  void allreduce_max(std::span<double> values) const override;
  void allreduce_sum(std::span<double> values) const override;
  void allreduce_min(std::span<int> values) const override;
  void broadcast(std::span<std::byte> bytes, int root = 0) const override;
  void barrier() const override;

 private:
  MpiProcessGroup();
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace autotune::mpi
