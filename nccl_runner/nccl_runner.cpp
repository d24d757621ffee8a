#include "nccl_runner/nccl_runner.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "nccl/version.hpp"
#include "nccl_runner/p2p_ops.hpp"
#include "nccl_runner/runner_state.hpp"
#include "runners/measure_plan.hpp"
#include "runners/watchdog.hpp"

namespace autotune::nccl_runner {

using nccl::Collective;
using runners::BufferCounts;
using runners::Candidate;
using runners::iterations_for;
using runners::kCheckRoot;
using runners::Measurement;
using runners::MeasureRequest;
using runners::Outcome;
using runners::RunnerInfo;
using runners::StepFailure;
using runners::WaitResult;

namespace {

std::string nccl_text(ncclResult_t r, ncclComm_t comm) {
  std::string text = ncclGetErrorString(r);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += fmt::format(" ({})", last);
  return text;
}

}  // namespace

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw StepFailure(Outcome::failed, fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

void nccl_check(ncclResult_t r, const char* what, ncclComm_t comm) {
  if (r != ncclSuccess) throw StepFailure(Outcome::failed, fmt::format("{}: {}", what, nccl_text(r, comm)));
}

NcclRunner::State::~State() {
  free_graphs();
  drop_comms(false);
  for (auto& d : devices) {
    cudaSetDevice(d.id);
    if (d.send) cudaFree(d.send);
    if (d.recv) cudaFree(d.recv);
    if (d.start) cudaEventDestroy(d.start);
    if (d.stop) cudaEventDestroy(d.stop);
    if (d.stream) cudaStreamDestroy(d.stream);
  }
}

// In lock-step: root's unique id is agreed before it is broadcast, and every rank's init is agreed before any
// goes on, so that one rank failing here ends every rank's runner with its reason instead of leaving the
// others waiting in MPI.
void NcclRunner::State::create_comms(runners::LockStep& steps) {
  auto cannot = [](const std::exception& e) {
    return std::runtime_error(std::string("cannot create the NCCL communicator: ") + e.what());
  };
  if (processes.distributed()) {
    ncclUniqueId id{};
    steps.step([&] {
      try {
        if (processes.is_root()) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
      } catch (const StepFailure& e) {
        throw cannot(e);
      }
    });
    processes.broadcast(std::span<std::byte>(reinterpret_cast<std::byte*>(&id), sizeof id));
    steps.step([&] {
      try {
        Device& d = devices.front();
        cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
        nccl_check(ncclCommInitRank(&d.world, ranks, id, d.rank), "ncclCommInitRank");
      } catch (const StepFailure& e) {
        throw cannot(e);
      }
    });
  } else {
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    std::vector<int> ids;
    for (const auto& d : devices) ids.push_back(d.id);
    try {
      nccl_check(ncclCommInitAll(comms.data(), static_cast<int>(ids.size()), ids.data()), "ncclCommInitAll");
    } catch (const StepFailure& e) {
      throw cannot(e);
    }
    for (size_t i = 0; i < devices.size(); ++i) devices[i].world = comms[i];
  }
  split_comms(steps);
  comms_ok = true;
}

// Which group each device measures in: ranks are placed node by node (rank = node x ranks per node + local
// rank, as srun and mpirun place them by default), and every process checks that its own rank says so.
void NcclRunner::State::place_devices() {
  if (!options.shape || *options.shape == runners::Scale{nodes, ranks}) return;
  int block_placed = 1;
  for (const auto& d : devices)
    block_placed &= d.rank % local_size == (processes.distributed() ? processes.local_rank() : d.id) ? 1 : 0;
  processes.allreduce_min(std::span<int>(&block_placed, 1));
  if (!block_placed)
    throw std::runtime_error(
        "measuring shape " + runners::shape_text(*options.shape) +
        " needs ranks placed node by node (block distribution, srun -m block); this job's are not");
  layout.emplace(*options.shape, nodes, local_size, options.node_offset, options.local_offset);
  members = options.shape->ranks;
  for (auto& d : devices) {
    const auto place = layout->place(d.rank / local_size, d.rank % local_size);
    d.group = place.group;
    d.member = place.member;
  }
}

// Every group of the shape at once, split from the job's communicator (ncclCommSplit: collective over it, so
// every device takes part, those in no group with NCCL_SPLIT_NOCOLOR). Without a shape the job's communicator
// is measured itself.
void NcclRunner::State::split_comms(runners::LockStep& steps) {
  if (!layout) {
    for (auto& d : devices) d.comm = d.world, d.member = d.rank;
    return;
  }
  steps.step([&] {
    try {
      const bool group = devices.size() > 1;
      if (group) nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (auto& d : devices) {
        cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
        nccl_check(
            ncclCommSplit(d.world, active(d) ? d.group : NCCL_SPLIT_NOCOLOR, d.member, &d.comm, nullptr),
            "ncclCommSplit");
      }
      if (group) nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    } catch (const StepFailure& e) {
      throw std::runtime_error(std::string("cannot split the NCCL communicator into groups of ") +
                               runners::shape_text(*options.shape) + ": " + e.what());
    }
  });
}

void NcclRunner::State::drop_comms(bool abort) {
  auto drop = [abort](ncclComm_t& c) {
    if (!c) return;
    if (abort)
      ncclCommAbort(c);
    else
      ncclCommDestroy(c);
    c = nullptr;
  };
  for (auto& d : devices) {
    if (d.comm != d.world) drop(d.comm);
    d.comm = nullptr;
    drop(d.world);
  }
  comms_ok = false;
}

void NcclRunner::State::free_graphs() {
  for (auto& d : devices) {
    if (d.graph) cudaGraphExecDestroy(d.graph);
    d.graph = nullptr;
  }
}

void NcclRunner::State::ensure_capacity(uint64_t bytes) {
  const uint64_t want = std::max<uint64_t>({bytes, options.max_bytes, sizeof(float)});
  if (want <= capacity && capacity != 0) return;
  for (auto& d : devices) {
    cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
    if (d.send) cudaFree(d.send);
    if (d.recv) cudaFree(d.recv);
    d.send = d.recv = nullptr;
  }
  capacity = 0;
  for (auto& d : devices) {
    cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
    cuda_check(cudaMalloc(&d.send, want), "cudaMalloc (send buffer)");
    cuda_check(cudaMalloc(&d.recv, want), "cudaMalloc (receive buffer)");
  }
  capacity = want;
}

std::pair<const void*, void*> NcclRunner::State::pointers(const Device& d, nccl::Operation op,
                                                          const BufferCounts& counts) const {
  if (!options.in_place) return {d.send, d.recv};
  float* base = static_cast<float*>(d.recv);
  const uint64_t block = static_cast<uint64_t>(d.member) * counts.op_count;
  // nccl-tests' in-place offsets: each rank's block of the whole buffer for the gathering operations, the
  // rank's block of the root's buffer for the scattering ones.
  if (op == nccl::Operation::allgather || op == nccl::Operation::gather) return {base + block, base};
  if (op == nccl::Operation::reducescatter || op == nccl::Operation::scatter) return {base, base + block};
  return {base, base};
}

void NcclRunner::State::issue(Device& d, nccl::Operation op, const BufferCounts& counts) {
  if (!active(d)) return;  // in no group of this shape: it sits the measurement out
  auto [send, recv] = pointers(d, op, counts);
  const size_t n = counts.op_count;
  auto collective = nccl::as_collective(op);
  if (!collective) {
    nccl_check(issue_p2p(op, send, recv, n, d.member, members, d.comm, d.stream), "launching the operation",
               d.comm);
    return;
  }
  ncclResult_t r = ncclSuccess;
  switch (*collective) {
    case Collective::allreduce:
      r = ncclAllReduce(send, recv, n, ncclFloat32, ncclSum, d.comm, d.stream);
      break;
    case Collective::allgather:
      r = ncclAllGather(send, recv, n, ncclFloat32, d.comm, d.stream);
      break;
    case Collective::reducescatter:
      r = ncclReduceScatter(send, recv, n, ncclFloat32, ncclSum, d.comm, d.stream);
      break;
    case Collective::broadcast:
      r = ncclBroadcast(send, recv, n, ncclFloat32, kCheckRoot, d.comm, d.stream);
      break;
    case Collective::reduce:
      r = ncclReduce(send, recv, n, ncclFloat32, ncclSum, kCheckRoot, d.comm, d.stream);
      break;
  }
  nccl_check(r, "launching the collective", d.comm);
}

void NcclRunner::State::launch(nccl::Operation c, const BufferCounts& counts, int ops, bool use_graph) {
  for (auto& d : devices) {
    cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
    cuda_check(cudaEventRecord(d.start, d.stream), "cudaEventRecord");
  }
  if (use_graph) {
    for (auto& d : devices) {
      cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
      cuda_check(cudaGraphLaunch(d.graph, d.stream), "cudaGraphLaunch");
    }
  } else {
    // One thread driving several GPUs must group their parts of each operation, or the first one blocks.
    const bool group = devices.size() > 1;
    for (int k = 0; k < ops; ++k) {
      if (group) nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (auto& d : devices) issue(d, c, counts);
      if (group) nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    }
  }
  for (auto& d : devices) {
    cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
    cuda_check(cudaEventRecord(d.stop, d.stream), "cudaEventRecord");
  }
}

void NcclRunner::State::capture(nccl::Operation c, const BufferCounts& counts, int ops) {
  free_graphs();
  std::vector<cudaGraph_t> graphs(devices.size(), nullptr);
  size_t begun = 0;
  try {
    for (auto& d : devices) {
      cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
      cuda_check(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal),
                 "cudaStreamBeginCapture");
      ++begun;
    }
    const bool group = devices.size() > 1;
    for (int k = 0; k < ops; ++k) {
      if (group) nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (auto& d : devices) issue(d, c, counts);
      if (group) nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    }
  } catch (...) {
    for (size_t i = 0; i < begun; ++i) {
      cudaStreamEndCapture(devices[i].stream, &graphs[i]);
      if (graphs[i]) cudaGraphDestroy(graphs[i]);
    }
    throw;
  }
  std::string failure;
  for (size_t i = 0; i < devices.size(); ++i) {
    cudaSetDevice(devices[i].id);
    cudaError_t e = cudaStreamEndCapture(devices[i].stream, &graphs[i]);
    if (e == cudaSuccess) e = cudaGraphInstantiate(&devices[i].graph, graphs[i], 0);
    if (e != cudaSuccess && failure.empty()) failure = cudaGetErrorString(e);
    if (graphs[i]) cudaGraphDestroy(graphs[i]);
  }
  if (!failure.empty()) {
    free_graphs();
    throw StepFailure(Outcome::failed, "capturing the timed loop as a CUDA graph: " + failure);
  }
}

void NcclRunner::State::wait(uint64_t bytes, int ops) {
  runners::WatchdogPolicy policy;
  policy.scale = options.watchdog_scale;
  std::string failure;
  auto poll = [&]() {
    bool all_done = true;
    for (auto& d : devices) {
      cudaError_t e = cudaEventQuery(d.stop);
      if (e == cudaSuccess) continue;
      if (e != cudaErrorNotReady) {
        failure = fmt::format("GPU {}: {}", d.id, cudaGetErrorString(e));
        return WaitResult::failed;
      }
      all_done = false;
      // A peer that failed (a lost connection, a remote abort) shows here before any event completes.
      ncclResult_t async = ncclSuccess;
      if (d.comm && ncclCommGetAsyncError(d.comm, &async) == ncclSuccess && async != ncclSuccess &&
          async != ncclInProgress) {
        failure = fmt::format("GPU {}: NCCL asynchronous error: {}", d.id, nccl_text(async, d.comm));
        return WaitResult::failed;
      }
    }
    return all_done ? WaitResult::done : WaitResult::timed_out;
  };
  const auto bound = runners::watchdog_bound(bytes, ops, policy);
  switch (runners::wait_with_watchdog(
      poll, [&] { drop_comms(true); }, bound, policy.poll)) {
    case WaitResult::done:
      return;
    case WaitResult::failed:
      throw StepFailure(Outcome::failed, failure);
    case WaitResult::timed_out:
      throw StepFailure(Outcome::timed_out,
                        fmt::format("{} operation(s) did not finish within {:.1f} s: communicator aborted",
                                    ops, bound.count()));
  }
}

std::vector<double> NcclRunner::State::elapsed_us(int ops) {
  std::vector<double> out;
  for (auto& d : devices) {
    if (!active(d)) continue;
    float ms = 0.0f;
    cuda_check(cudaEventElapsedTime(&ms, d.start, d.stop), "cudaEventElapsedTime");
    out.push_back(runners::per_operation_us(ms, ops));
  }
  return out;
}

double NcclRunner::State::agree_max(double value) const {
  processes.allreduce_max(std::span<double>(&value, 1));
  return value;
}

void NcclRunner::State::note_hook(const Candidate& cand, Measurement& m) {
  const bool forcing = !cand.is_default();
  auto seen = hook.last();
  if (!seen) return;
  if (forcing && seen->refused)
    throw StepFailure(
        Outcome::unsupported,
        fmt::format("NCCL marked {} unusable for this operation (it kept its own choice)", to_string(cand)));
  if (forcing && seen->calls == 0)
    throw StepFailure(Outcome::unsupported,
                      "NCCL never consulted the tuner for this operation (a 1-rank communicator or an empty "
                      "operation), so nothing could be forced");
  if (seen->calls == 0) return;
  m.used_algorithm = nccl::algorithm_from_id(seen->algorithm);
  m.used_protocol = nccl::protocol_from_id(seen->protocol);
  m.used_channels = seen->channels;
}

Measurement NcclRunner::State::measure(const MeasureRequest& r) {
  Measurement m;
  m.request = r;
  if (auto why = precheck(r)) {  // the same on every process: no agreement needed
    m.outcome = why->first;
    m.detail = why->second;
    return m;
  }
  const Candidate& cand = r.candidate;
  const nccl::Operation op = r.operation();
  const BufferCounts counts = runners::buffer_counts(op, members, r.bytes);

  // Every step is agreed by every process before any of them goes on (runners/lock_step.hpp).
  runners::LockStep steps(processes);
  auto step = [&](auto&& body) { return steps.step(body); };
  auto read_hook = [&] { note_hook(cand, m); };

  int iterations = options.iterations;
  std::vector<std::vector<double>> per_device(
      std::count_if(devices.begin(), devices.end(), [&](const Device& d) { return active(d); }));
  if (!comms_ok) {
    free_graphs();
    create_comms(steps);  // throws RunnerBroken on every process when any cannot: the runner cannot go on
    ++rebuilds;
  }
  step([&] {
    ensure_capacity(r.bytes);
    const int algo = cand.algorithm ? static_cast<int>(*cand.algorithm) : -1;
    const int proto = cand.protocol ? static_cast<int>(*cand.protocol) : -1;
    if (hook.usable() && !hook.force(algo, proto, cand.channels))
      throw StepFailure(Outcome::failed, "the sweep hook refused " + to_string(cand));
    const int warmup = std::max(1, options.warmup_iterations);
    launch(op, counts, warmup, false);
    wait(r.bytes, warmup);
    read_hook();
  });
  double estimate = 0.0;
  if (iterations <= 0) {
    // The first operations of a candidate include NCCL's lazy connection setup: time a separate short loop.
    const int probe = iterations_for(runners::rough_estimate_us(r.bytes));
    step([&] {
      launch(op, counts, probe, false);
      wait(r.bytes, probe);
      for (double t : elapsed_us(probe)) estimate = std::max(estimate, t);
    });
    if (steps.ok()) iterations = iterations_for(agree_max(estimate));
  }
  if (options.cuda_graph) {
    step([&] {
      capture(op, counts, iterations);
      launch(op, counts, iterations, true);  // the first launch uploads the graph: untimed
      wait(r.bytes, iterations);
    });
  }
  for (int rep = 0; rep < r.repetitions; ++rep) {
    step([&] {
      launch(op, counts, iterations, options.cuda_graph);
      wait(r.bytes, iterations);
      auto t = elapsed_us(iterations);
      for (size_t i = 0; i < t.size(); ++i) per_device[i].push_back(t[i]);
    });
  }
  step(read_hook);
  if (options.check_results) step([&] { check_results(r, counts); });
  free_graphs();

  m.outcome = steps.outcome();
  m.detail = steps.detail();
  if (m.outcome == Outcome::failed || m.outcome == Outcome::timed_out) {
    drop_comms(true);  // the next request starts on a fresh communicator
    return m;
  }
  if (m.outcome == Outcome::unsupported) return m;
  combine_times(per_device, m);
  const double median = m.median_us();
  m.algbw_gbps = runners::algbw_gbps(r.bytes, median);
  m.busbw_gbps = runners::busbw_gbps(op, members, r.bytes, median);
  return m;
}

void NcclRunner::State::open_devices() {
  // Before anything touches NCCL: no device means nothing else can work.
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    throw std::runtime_error(std::string("no CUDA device: ") + cudaGetErrorString(e));
  if (count < 1) throw std::runtime_error("no CUDA device: cudaGetDeviceCount found none");
  if (processes.distributed()) {
    if (processes.local_size() > count)
      throw std::runtime_error(
          fmt::format("{} processes on this node but {} CUDA device(s): start one process per GPU",
                      processes.local_size(), count));
    devices.push_back(Device{.id = processes.local_rank(), .rank = processes.rank()});
    ranks = processes.size();
  } else {
    for (int i = 0; i < count; ++i) devices.push_back(Device{.id = i, .rank = i});
    ranks = count;
  }
  int version = 0;
  if (ncclGetVersion(&version) == ncclSuccess)
    if (auto v = nccl::Version::from_code(version)) nccl_version = v->text();
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, devices.front().id) == cudaSuccess) gpu_model = prop.name;
  for (auto& d : devices) {
    auto fail = [&](cudaError_t e, const char* what) {
      if (e != cudaSuccess)
        throw std::runtime_error(fmt::format("GPU {}: {}: {}", d.id, what, cudaGetErrorString(e)));
    };
    fail(cudaSetDevice(d.id), "cudaSetDevice");
    fail(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    fail(cudaEventCreate(&d.start), "cudaEventCreate");
    fail(cudaEventCreate(&d.stop), "cudaEventCreate");
  }
}

void NcclRunner::State::count_nodes() {
  double leaders = processes.local_rank() == 0 ? 1.0 : 0.0;
  processes.allreduce_sum(std::span<double>(&leaders, 1));
  nodes = static_cast<int>(leaders);
  local_size = processes.distributed() ? processes.local_size() : static_cast<int>(devices.size());
  members = ranks;
}

NcclRunner::NcclRunner(const runners::MeasureOptions& options, const runners::ProcessGroup& processes)
    // The hook sets NCCL_TUNER_PLUGIN, which NCCL reads when it first initialises.
    : state_(std::make_unique<State>(options, processes, options.plugin_path)) {
  State& s = *state_;
  // A process that fails here stops every process's runner, with its reason (runners/lock_step.hpp).
  runners::LockStep setup(processes);
  setup.step([&] { s.open_devices(); });
  s.count_nodes();
  s.place_devices();
  s.create_comms(setup);
  if (options.max_bytes > 0)
    setup.step([&] {
      try {
        s.ensure_capacity(options.max_bytes);
      } catch (const StepFailure& e) {
        throw std::runtime_error(std::string("allocating buffers for the largest size: ") + e.what());
      }
    });
}

NcclRunner::~NcclRunner() = default;

namespace {
// The stand-in NCCL of tests/standin (CI without GPUs) says so through this symbol: what runs on it comes
// from a model, so it is labelled "standin", never "measured".
bool standin_nccl() {
  void* nccl = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
  const bool standin = nccl && dlsym(nccl, "nccl_standin_identity");
  if (nccl) dlclose(nccl);
  return standin;
}
}  // namespace

RunnerInfo NcclRunner::info() const {
  const State& s = *state_;
  RunnerInfo i;
  i.kind = "nccl";
  i.source = standin_nccl() ? "standin" : "measured";
  // The measured communicator: the job's, or each group of the shape.
  i.ranks = s.layout ? s.layout->shape().ranks : s.ranks;
  i.nodes = s.layout ? s.layout->shape().nodes : s.nodes;
  i.gpus_per_node = s.layout ? s.layout->shape().ranks_per_node() : s.local_size;
  i.groups = s.layout ? s.layout->groups() : 1;
  i.gpu_model = s.gpu_model;
  i.nccl_version = s.nccl_version;
  const std::string forcing = s.hook.usable()
                                  ? "forcing through " + s.hook.path()
                                  : "cannot force (" + s.hook.problem() + "): NCCL's default only";
  i.description = fmt::format(
      "NCCL {} on {} rank(s), {} node(s) x {} {} ({}); {}; {}{}, results {}", s.nccl_version, s.ranks,
      s.nodes, s.local_size, s.gpu_model,
      s.processes.distributed() ? "MPI, one process per GPU" : "one process driving every GPU", forcing,
      s.options.in_place ? "in-place" : "out-of-place", s.options.cuda_graph ? ", CUDA graph" : "",
      s.options.check_results ? "checked" : "not checked");
  if (s.layout)
    i.description += fmt::format("; {} groups of {} at once, split from the job's {} node(s) x {}", i.groups,
                                 runners::shape_text(s.layout->shape()), s.nodes, s.local_size);
  if (s.rebuilds > 0) i.description += fmt::format("; communicator rebuilt {} time(s)", s.rebuilds);
  return i;
}

std::vector<Measurement> NcclRunner::run(std::span<const MeasureRequest> batch) {
  std::vector<Measurement> out;
  out.reserve(batch.size());
  for (const auto& r : batch) out.push_back(state_->measure(r));
  return out;
}

}  // namespace autotune::nccl_runner
