// A small NCCL program for the realnccl tests: NVIDIA's own NCCL host code (Debian's libnccl_static.a, linked
// in) creates communicators over the stand-in CUDA devices and issues collectives, so that NCCL's decisions
// (its TUNING log lines) and its calls into our tuner and profiler plugins can be checked. Kernels are no-ops
// on the stand-in: what runs is what NCCL decides, logs and calls, never data.
//   realnccl_job [--devices N] [--split tp|dp] COLL:BYTES...   (COLL: allreduce allgather reducescatter
//                                                               broadcast reduce; BYTES: a number)
//   realnccl_job --rank R --nranks N --id-file FILE COLL:BYTES...
//     one rank per process (processes posing as nodes through NCCL_HOSTID): rank 0 writes NCCL's unique id
//     to FILE, the others wait for it; each runs on device R modulo its devices.
// Exit status 2 for bad usage; 1 when NCCL or CUDA fails (the failing call is printed).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "realnccl_job: %s\nusage: realnccl_job [--devices N] [--split tp|dp] COLL:BYTES...\n",
               why.c_str());
  std::exit(2);
}

void check_nccl(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  std::fprintf(stderr, "realnccl_job: %s: %s\n", what, ncclGetErrorString(r));
  std::exit(1);
}

void check_cuda(cudaError_t r, const char* what) {
  if (r == cudaSuccess) return;
  std::fprintf(stderr, "realnccl_job: %s: CUDA error %d\n", what, static_cast<int>(r));
  std::exit(1);
}

struct Op {
  std::string coll;
  size_t bytes = 0;
};

struct Options {
  int devices = 8;
  std::string split;  // "", "tp" (groups of 4 consecutive devices) or "dp" (devices i and i+4)
  int rank = -1;      // >= 0: one rank of a communicator across processes
  int nranks = 0;
  std::string id_file;
  std::vector<Op> ops;
};

size_t parse_size(const std::string& text, const std::string& arg) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v == 0) usage("'" + arg + "': expected COLL:BYTES with BYTES > 0");
  return static_cast<size_t>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--devices" && i + 1 < argc) {
      o.devices = std::atoi(argv[++i]);
      if (o.devices < 1 || o.devices > 64) usage("--devices: expected 1..64");
    } else if (a == "--rank" && i + 1 < argc) {
      o.rank = std::atoi(argv[++i]);
    } else if (a == "--nranks" && i + 1 < argc) {
      o.nranks = std::atoi(argv[++i]);
    } else if (a == "--id-file" && i + 1 < argc) {
      o.id_file = argv[++i];
    } else if (a == "--split" && i + 1 < argc) {
      o.split = argv[++i];
      if (o.split != "tp" && o.split != "dp") usage("--split: expected tp or dp");
    } else {
      const auto colon = a.find(':');
      if (colon == std::string::npos) usage("'" + a + "': expected COLL:BYTES");
      const std::string c = a.substr(0, colon);
      if (c != "allreduce" && c != "allgather" && c != "reducescatter" && c != "broadcast" && c != "reduce")
        usage("'" + c + "': expected allreduce, allgather, reducescatter, broadcast or reduce");
      o.ops.push_back({c, parse_size(a.substr(colon + 1), a)});
    }
  }
  if (o.rank >= 0 && (o.nranks < 1 || o.rank >= o.nranks || o.id_file.empty() || !o.split.empty()))
    usage("--rank: expected 0 <= R < --nranks N with --id-file FILE, and no --split");
  // Across processes the socket transport's proxy waits for data the stand-in's no-op kernels never post:
  // the first collective is decided and logged, a second never gets past ncclGroupEnd.
  if (o.rank >= 0 && o.ops.size() != 1) usage("--rank: expected exactly one COLL:BYTES");
  return o;
}

// One collective on one rank; bytes as NCCL's tuner sees them (the whole buffer for allgather/reducescatter).
ncclResult_t issue(const Op& op, void* buf, ncclComm_t comm, int nranks, cudaStream_t s) {
  const size_t per_rank = op.bytes / static_cast<size_t>(nranks);
  if (op.coll == "allreduce") return ncclAllReduce(buf, buf, op.bytes, ncclInt8, ncclSum, comm, s);
  if (op.coll == "allgather") return ncclAllGather(buf, buf, per_rank, ncclInt8, comm, s);
  if (op.coll == "reducescatter") return ncclReduceScatter(buf, buf, per_rank, ncclInt8, ncclSum, comm, s);
  if (op.coll == "broadcast") return ncclBroadcast(buf, buf, op.bytes, ncclInt8, 0, comm, s);
  return ncclReduce(buf, buf, op.bytes, ncclInt8, ncclSum, 0, comm, s);
}

// Rank 0 publishes NCCL's unique id by rename (never half-written); the others poll for it.
ncclUniqueId shared_id(const Options& o) {
  ncclUniqueId id{};
  if (o.rank == 0) {
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const std::string tmp = o.id_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0 ||
        std::rename(tmp.c_str(), o.id_file.c_str()) != 0)
      usage("cannot write " + o.id_file);
    return id;
  }
  for (int tries = 0; tries < 600; ++tries) {
    if (FILE* f = std::fopen(o.id_file.c_str(), "rb")) {
      const size_t got = std::fread(&id, sizeof id, 1, f);
      std::fclose(f);
      if (got == 1) return id;
    }
    usleep(100000);
  }
  usage("no unique id in " + o.id_file + " after 60 s");
}

// One rank of a communicator whose ranks are processes.
ncclComm_t process_rank(const Options& o) {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check_cuda(cudaSetDevice(o.rank % devices), "cudaSetDevice");
  const ncclUniqueId id = shared_id(o);
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, o.nranks, id, o.rank), "ncclCommInitRank");
  return comm;
}

// The communicators the job runs on: all devices, or ncclCommSplit of them into tp or dp groups.
std::vector<ncclComm_t> communicators(const Options& o) {
  if (o.rank >= 0) return {process_rank(o)};
  std::vector<ncclComm_t> all(static_cast<size_t>(o.devices));
  std::vector<int> devs(static_cast<size_t>(o.devices));
  for (int i = 0; i < o.devices; ++i) devs[static_cast<size_t>(i)] = i;
  check_nccl(ncclCommInitAll(all.data(), o.devices, devs.data()), "ncclCommInitAll");
  if (o.split.empty()) return all;
  std::vector<ncclComm_t> parts(all.size());
  const int half = o.devices / 2;
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int i = 0; i < o.devices; ++i) {
    const int color = o.split == "tp" ? i / half : i % half;
    check_nccl(ncclCommSplit(all[static_cast<size_t>(i)], color, i, &parts[static_cast<size_t>(i)], nullptr),
               "ncclCommSplit");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd (split)");
  return parts;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  size_t largest = 1;
  for (const Op& op : o.ops) largest = op.bytes > largest ? op.bytes : largest;
  const std::vector<ncclComm_t> comms = communicators(o);
  std::vector<void*> bufs(comms.size());
  std::vector<cudaStream_t> streams(comms.size());
  for (size_t i = 0; i < comms.size(); ++i) {
    if (o.rank < 0) check_cuda(cudaSetDevice(static_cast<int>(i)), "cudaSetDevice");
    check_cuda(cudaMalloc(&bufs[i], largest), "cudaMalloc");
    check_cuda(cudaStreamCreate(&streams[i]), "cudaStreamCreate");
  }
  for (const Op& op : o.ops) {
    // On NCCL's own stream (stdout), so that its TUNING lines that follow are this operation's.
    std::printf("realnccl_job: op %s %zu\n", op.coll.c_str(), op.bytes);
    std::fflush(stdout);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (size_t i = 0; i < comms.size(); ++i) {
      int nranks = 0;
      check_nccl(ncclCommCount(comms[i], &nranks), "ncclCommCount");
      check_nccl(issue(op, bufs[i], comms[i], nranks, streams[i]), op.coll.c_str());
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    for (size_t i = 0; i < comms.size(); ++i) check_cuda(cudaStreamSynchronize(streams[i]), "sync");
  }
  if (o.rank >= 0) {  // ncclCommDestroy would wait for that proxy too
    std::printf("realnccl_job: rank %d of %d, 1 operation done\n", o.rank, o.nranks);
    std::fflush(stdout);
    std::_Exit(0);
  }
  for (ncclComm_t c : comms) check_nccl(ncclCommDestroy(c), "ncclCommDestroy");
  std::printf("realnccl_job: %zu communicators, %zu operations done\n", comms.size(), o.ops.size());
  return 0;
}
