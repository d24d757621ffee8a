// A small NCCL job for the stand-in tests: the collectives of a training step as NCCL and the tuner plugin
// see them. Under mpirun, one process per GPU (rank 0's unique id broadcast with MPI, the GPU picked by the
// rank on its node); alone, one process driving every GPU. For each size it runs the collective --iters
// times, checks every rank's output exactly (runners/collective_check's patterns), and rank 0 prints the
// virtual GPU time per operation ("job: AllReduce 65536 B: 12.34 us per operation (virtual)") and the sum
// over sizes ("job total: 1234.56 us virtual"). An asynchronous error (ranks that disagree, a failed peer)
// ends it on every rank with "job failed (rank R): <NCCL's error>: <ncclGetLastError>" and exit status 1;
// bad usage with status 2. Under mpirun, --parallelism tp=T,pp=P,dp=D also splits the world (ncclCommSplit)
// into the tensor, pipeline and data parallel groups of a Megatron-style layout (rank = tp index + T * (dp
// index + D * pp index): tensor groups are consecutive ranks) and runs the sizes on each kind in turn, all
// groups of a kind at once, as training does ("job: dp AllReduce ...").
//   standin_job [--collective allreduce] [--sizes 64K,1M] [--iters 20] [--parallelism tp=8,pp=2,dp=2]
#include <cuda_runtime_api.h>
// The C API only: Open MPI's header otherwise pulls in its C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/byte_size.hpp"
#include "runners/collective_check.hpp"

namespace {

using autotune::nccl::Collective;
namespace runners = autotune::runners;

struct Gpu {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

// One kind of group of a parallel layout: its name and, for a rank, the colour and key of ncclCommSplit.
struct GroupKind {
  std::string name;
  int colour = 0, key = 0;
};

struct Job {
  Collective collective = Collective::allreduce;
  int tp = 0, pp = 1, dp = 1;  // tp 0: no --parallelism
  std::vector<uint64_t> sizes = {64 << 10, 1 << 20};
  int iters = 20;
  bool mpi = false;
  int rank = 0, ranks = 1;
  std::vector<Gpu> gpus;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "standin_job: %s\nusage: standin_job [--collective NAME] [--sizes 64K,1M] [--iters N]\n",
               why.c_str());
  std::exit(2);
}

[[noreturn]] void fail(const Job& job, const std::string& why) {
  std::printf("job failed (rank %d): %s\n", job.rank, why.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void cuda(const Job& job, cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(job, std::string(what) + ": " + cudaGetErrorString(e));
}

void nccl(const Job& job, ncclResult_t r, const char* what) {
  if (r != ncclSuccess)
    fail(job, std::string(what) + ": " + ncclGetErrorString(r) + ": " + ncclGetLastError(nullptr));
}

void parse(Job& job, int argc, char** argv) {
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + ": expected a value");
    const std::string value = argv[i + 1];
    if (flag == "--collective") {
      auto c = autotune::nccl::parse_collective(value);
      if (!c)
        usage("--collective: expected allreduce, allgather, reducescatter, broadcast or reduce, found '" +
              value + "'");
      job.collective = *c;
    } else if (flag == "--sizes") {
      job.sizes.clear();
      for (size_t start = 0;;) {
        size_t comma = value.find(',', start);
        auto b = autotune::parse_byte_size(
            value.substr(start, comma == std::string::npos ? comma : comma - start));
        if (!b || *b == 0) usage("--sizes: expected sizes like 64K,1M, found '" + value + "'");
        job.sizes.push_back(*b);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (flag == "--parallelism") {
      if (std::sscanf(value.c_str(), "tp=%d,pp=%d,dp=%d", &job.tp, &job.pp, &job.dp) != 3 || job.tp < 1 ||
          job.pp < 1 || job.dp < 1)
        usage("--parallelism: expected tp=T,pp=P,dp=D, found '" + value + "'");
    } else if (flag == "--iters") {
      job.iters = std::atoi(value.c_str());
      if (job.iters < 1) usage("--iters: expected a positive count, found '" + value + "'");
    } else {
      usage("unknown option " + flag);
    }
  }
}

void create(Job& job) {
  if (job.mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &job.ranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, job.rank, MPI_INFO_NULL, &node);
    int local = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    ncclUniqueId id;
    if (job.rank == 0) nccl(job, ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    Gpu g{local, job.rank};
    cuda(job, cudaSetDevice(g.device), "cudaSetDevice");
    nccl(job, ncclCommInitRank(&g.comm, job.ranks, id, job.rank), "ncclCommInitRank");
    job.gpus.push_back(g);
  } else {
    int count = 0;
    cuda(job, cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    std::vector<ncclComm_t> comms(static_cast<size_t>(count));
    nccl(job, ncclCommInitAll(comms.data(), count, nullptr), "ncclCommInitAll");
    job.ranks = count;
    for (int i = 0; i < count; ++i) job.gpus.push_back(Gpu{i, i, comms[static_cast<size_t>(i)]});
  }
  uint64_t largest = 0;
  for (uint64_t b : job.sizes) largest = std::max(largest, b);
  for (Gpu& g : job.gpus) {
    cuda(job, cudaSetDevice(g.device), "cudaSetDevice");
    cuda(job, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda(job, cudaEventCreate(&g.start), "cudaEventCreate");
    cuda(job, cudaEventCreate(&g.stop), "cudaEventCreate");
    cuda(job, cudaMalloc(reinterpret_cast<void**>(&g.send), largest + 4), "cudaMalloc");
    cuda(job, cudaMalloc(reinterpret_cast<void**>(&g.recv), largest + 4), "cudaMalloc");
  }
}

void issue(const Job& job, Gpu& g, uint64_t bytes) {
  const auto counts = runners::buffer_counts(job.collective, job.ranks, bytes);
  const size_t n = counts.op_count;
  switch (job.collective) {
    case Collective::allreduce:
      return nccl(job, ncclAllReduce(g.send, g.recv, n, ncclFloat32, ncclSum, g.comm, g.stream),
                  "ncclAllReduce");
    case Collective::allgather:
      return nccl(job, ncclAllGather(g.send, g.recv, n, ncclFloat32, g.comm, g.stream), "ncclAllGather");
    case Collective::reducescatter:
      return nccl(job, ncclReduceScatter(g.send, g.recv, n, ncclFloat32, ncclSum, g.comm, g.stream),
                  "ncclReduceScatter");
    case Collective::broadcast:
      return nccl(job, ncclBroadcast(g.send, g.recv, n, ncclFloat32, runners::kCheckRoot, g.comm, g.stream),
                  "ncclBroadcast");
    case Collective::reduce:
      return nccl(job,
                  ncclReduce(g.send, g.recv, n, ncclFloat32, ncclSum, runners::kCheckRoot, g.comm, g.stream),
                  "ncclReduce");
  }
}

// Until every stop event completed; an asynchronous error on a communicator ends the job.
void wait(const Job& job) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    bool done = true;
    for (const Gpu& g : job.gpus) {
      cudaError_t e = cudaEventQuery(g.stop);
      if (e == cudaSuccess) continue;
      if (e != cudaErrorNotReady) cuda(job, e, "cudaEventQuery");
      done = false;
      ncclResult_t async = ncclSuccess;
      nccl(job, ncclCommGetAsyncError(g.comm, &async), "ncclCommGetAsyncError");
      if (async != ncclSuccess)
        fail(job, std::string(ncclGetErrorString(async)) + ": " + ncclGetLastError(g.comm));
    }
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline) fail(job, "the collectives did not finish within 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::vector<GroupKind> group_kinds(const Job& job) {
  const int r = job.rank, t = r % job.tp, d = (r / job.tp) % job.dp, p = r / (job.tp * job.dp);
  return {{"tp", d + job.dp * p, t}, {"pp", t + job.tp * d, p}, {"dp", t + job.tp * p, d}};
}

// The world's communicator replaced by this rank's group of one kind: what the checks and the timing see.
void split_into(Job& job, const Job& world, const GroupKind& kind) {
  Gpu& g = job.gpus.at(0);
  nccl(job, ncclCommSplit(world.gpus.at(0).comm, kind.colour, kind.key, &g.comm, nullptr), "ncclCommSplit");
  nccl(job, ncclCommCount(g.comm, &job.ranks), "ncclCommCount");
  nccl(job, ncclCommUserRank(g.comm, &g.rank), "ncclCommUserRank");
}

double run_size(Job& job, uint64_t bytes) {
  for (Gpu& g : job.gpus) {
    std::vector<float> input = runners::make_input(job.collective, job.ranks, g.rank, bytes);
    cuda(job, cudaSetDevice(g.device), "cudaSetDevice");
    cuda(job, cudaMemcpy(g.send, input.data(), input.size() * sizeof(float), cudaMemcpyHostToDevice),
         "cudaMemcpy");
    cuda(job, cudaEventRecord(g.start, g.stream), "cudaEventRecord");
  }
  for (int k = 0; k < job.iters; ++k) {
    if (job.gpus.size() > 1) nccl(job, ncclGroupStart(), "ncclGroupStart");
    for (Gpu& g : job.gpus) issue(job, g, bytes);
    if (job.gpus.size() > 1) nccl(job, ncclGroupEnd(), "ncclGroupEnd");
  }
  for (Gpu& g : job.gpus) cuda(job, cudaEventRecord(g.stop, g.stream), "cudaEventRecord");
  wait(job);
  double slowest = 0.0;
  for (Gpu& g : job.gpus) {
    float ms = 0.0f;
    cuda(job, cudaEventElapsedTime(&ms, g.start, g.stop), "cudaEventElapsedTime");
    slowest = std::max(slowest, ms * 1000.0 / job.iters);
    auto expected = runners::expected_output(job.collective, job.ranks, g.rank, bytes);
    if (!expected) continue;
    std::vector<float> found(expected->size());
    cuda(job, cudaMemcpy(found.data(), g.recv, found.size() * sizeof(float), cudaMemcpyDeviceToHost),
         "cudaMemcpy");
    auto check = runners::compare_exact(*expected, found);
    if (!check.ok()) fail(job, "wrong result at " + std::to_string(bytes) + " B: " + check.describe());
  }
  if (job.mpi) MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  Job job;
  parse(job, argc, argv);
  job.mpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  if (job.mpi) MPI_Init(&argc, &argv);
  create(job);
  if (job.tp > 0 && (!job.mpi || job.tp * job.pp * job.dp != job.ranks))
    usage("--parallelism: expected tp*pp*dp = the ranks under mpirun (" + std::to_string(job.ranks) + ")");
  std::vector<std::pair<std::string, Job>> runs = {{"", job}};
  if (job.tp > 0) {
    runs.clear();
    for (const GroupKind& kind : group_kinds(job)) {
      Job group = job;
      split_into(group, job, kind);
      runs.emplace_back(kind.name + " ", group);
    }
  }
  double total = 0.0;
  for (auto& [label, run] : runs)
    for (uint64_t bytes : run.sizes) {
      const double us = run_size(run, bytes);
      total += us;
      if (job.rank == 0)
        std::printf("job: %s%s %llu B: %.2f us per operation (virtual), %d operations on %d ranks\n",
                    label.c_str(), std::string(autotune::nccl::nccl_name(run.collective)).c_str(),
                    static_cast<unsigned long long>(bytes), us, run.iters, run.ranks);
    }
  if (job.rank == 0) std::printf("job total: %.2f us virtual\n", total);
  for (auto& [label, run] : runs)
    if (!label.empty()) nccl(job, ncclCommDestroy(run.gpus.at(0).comm), "ncclCommDestroy");
  for (Gpu& g : job.gpus) nccl(job, ncclCommDestroy(g.comm), "ncclCommDestroy");
  if (job.mpi) MPI_Finalize();
  return 0;
}
