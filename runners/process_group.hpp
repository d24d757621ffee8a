#pragma once
// The processes of one measurement job, as the runners and `tune` see them: under mpirun or srun one process
// per GPU across any number of nodes, otherwise this process alone. Rank 0 reports; the others stay quiet.
// Collective operations must be called by every process in the same order (MPI's rule). The MPI side lives in
// a module of its own (mpi/), loaded only when this process was started by a launcher, so that commands that
// never measure do not map libmpi; tests stand in for it with a group of threads.
// Not thread-safe: one thread per process calls it.

#include <cstddef>
#include <span>
#include <string>

namespace autotune::runners {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the processes on this node (picks the GPU), and how many there are.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  bool is_root() const { return rank() == 0; }
  bool distributed() const { return size() > 1; }

  // Element-wise over all processes, in place.
  virtual void allreduce_max(std::span<double> values) const = 0;
  virtual void allreduce_sum(std::span<double> values) const = 0;
  virtual void allreduce_min(std::span<int> values) const = 0;
  // Copies root's bytes to every process.
  virtual void broadcast(std::span<std::byte> bytes, int root = 0) const = 0;
  virtual void barrier() const = 0;
};

// This process alone: rank 0 of 1, every collective the identity.
class SingleProcess final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void allreduce_max(std::span<double>) const override {}
  void allreduce_sum(std::span<double>) const override {}
  void allreduce_min(std::span<int>) const override {}
  void broadcast(std::span<std::byte>, int) const override {}
  void barrier() const override {}
};

// Root's `text` on every process (the others' `text` is ignored). A collective: every process calls it.
std::string broadcast_text(const ProcessGroup& processes, std::string text, int root = 0);

// Whether this process was started by a launcher (Open MPI, MPICH/PMI, PMIx, Slurm's srun with several
// tasks).
bool launched_by_mpi();

// The job this process belongs to: the MPI world when launched_by_mpi() (the MPI module is loaded and MPI
// initialised on first use, finalised at exit), else SingleProcess. Throws std::runtime_error when started by
// a launcher but the MPI module cannot be loaded.
const ProcessGroup& job_processes();

}  // namespace autotune::runners
