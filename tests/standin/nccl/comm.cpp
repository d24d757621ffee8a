#include "tests/standin/nccl/comm.hpp"

#include <cuda_runtime_api.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "nccl/version.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/settings.hpp"

namespace autotune::standin {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kIdMagic[8] = {'N', 'S', 'T', 'A', 'N', 'D', 'I', 'N'};

struct IdBody {
  char magic[8];
  uint64_t nonce;
};
static_assert(sizeof(IdBody) <= sizeof(ncclUniqueId));

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// NCCL's host identity: NCCL_HOSTID when set (one host can so hold several "nodes"), else the host name and
// the boot id.
std::string host_identity() {
  if (const char* id = std::getenv("NCCL_HOSTID"); id && *id) return id;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  return std::string(host) + boot;
}

std::string segment_name(uint64_t nonce) {
  char name[64];
  std::snprintf(name, sizeof name, "/nccl-standin-%016llx", static_cast<unsigned long long>(nonce));
  return name;
}

ncclUniqueId id_for(uint64_t nonce) {
  ncclUniqueId id{};
  IdBody body{};
  std::memcpy(body.magic, kIdMagic, sizeof kIdMagic);
  body.nonce = nonce;
  std::memcpy(id.internal, &body, sizeof body);
  return id;
}

uint64_t nonce_of(const ncclUniqueId& id) {
  IdBody body{};
  std::memcpy(&body, id.internal, sizeof body);
  return body.nonce;
}

// The injected creation failure (NCCL_STANDIN_FAULT_INIT_RANK / _AFTER), counted per rank and process.
std::string injected_init_failure(int rank) {
  const Faults& f = settings().faults;
  if (std::find(f.init_fail_ranks.begin(), f.init_fail_ranks.end(), rank) == f.init_fail_ranks.end())
    return "";
  static std::mutex mutex;
  static std::map<int, int> created;
  std::lock_guard lock(mutex);
  if (created[rank]++ < f.init_fail_after) return "";
  return "injected fault: communicator creation fails on rank " + std::to_string(rank) +
         " (NCCL_STANDIN_FAULT_INIT_RANK)";
}

void lay_out_nodes(CommState& c) {
  std::vector<uint64_t> hosts;
  std::vector<int> per_node;
  c.node_of.assign(static_cast<size_t>(c.ranks), 0);
  for (int r = 0; r < c.ranks; ++r) {
    const uint64_t h = c.segment->slot(r).host_hash;
    auto it = std::find(hosts.begin(), hosts.end(), h);
    if (it == hosts.end()) {
      hosts.push_back(h);
      per_node.push_back(0);
      it = hosts.end() - 1;
    }
    const int node = static_cast<int>(it - hosts.begin());
    if (r == c.rank) c.local_rank = per_node[static_cast<size_t>(node)];
    c.node_of[static_cast<size_t>(r)] = node;
    ++per_node[static_cast<size_t>(node)];
  }
  c.nodes = static_cast<int>(hosts.size());
  c.local_ranks = per_node[static_cast<size_t>(c.node_of[static_cast<size_t>(c.rank)])];
  c.min_local_ranks = *std::min_element(per_node.begin(), per_node.end());
  c.max_local_ranks = *std::max_element(per_node.begin(), per_node.end());
}

std::string duplicate_gpu(CommState& c) {
  for (int a = 0; a < c.ranks; ++a)
    for (int b = a + 1; b < c.ranks; ++b) {
      const RankSlot &x = c.segment->slot(a), &y = c.segment->slot(b);
      if (x.host_hash == y.host_hash && x.cuda_device == y.cuda_device)
        return "Duplicate GPU detected : rank " + std::to_string(a) + " and rank " + std::to_string(b) +
               " both on CUDA device " + std::to_string(x.cuda_device);
    }
  return "";
}

std::string missing_ranks(CommState& c) {
  std::string list;
  for (int r = 0; r < c.ranks; ++r)
    if (c.segment->slot(r).state.load() != 1) list += (list.empty() ? "" : ", ") + std::to_string(r);
  return list;
}

// Until every rank has joined, one has failed, or the deadline passed.
ncclResult_t wait_for_ranks(CommState& c, Clock::time_point deadline, std::string* why) {
  SegmentHeader& h = c.segment->header();
  for (;;) {
    const uint32_t joined = h.joined.load(std::memory_order_acquire);
    if (joined >= static_cast<uint32_t>(c.ranks)) return ncclSuccess;
    if (h.failed_rank.load() >= 0) {
      *why = c.segment->failure();
      return ncclRemoteError;
    }
    if (Clock::now() > deadline) {
      *why = "timed out after " + std::to_string(static_cast<int>(settings().init_timeout_s)) +
             " s waiting for rank(s) " + missing_ranks(c) + " to join (NCCL_STANDIN_INIT_TIMEOUT)";
      c.segment->fail(c.rank, *why);
      c.segment->unlink();
      return ncclSystemError;
    }
    futex_wait(h.joined, joined, std::chrono::milliseconds(20));
  }
}

ncclResult_t join(CommState& c, Clock::time_point deadline, std::string* why) {
  RankSlot& me = c.segment->slot(c.rank);
  int32_t empty = 0;
  if (!me.state.compare_exchange_strong(empty, 2)) {
    *why = "rank " + std::to_string(c.rank) + " joined the communicator twice";
    c.segment->fail(c.rank, *why);
    return ncclInvalidUsage;
  }
  const std::string host = host_identity();
  me.pid = getpid();
  me.cuda_device = c.device;
  me.host_hash = fnv1a(host);
  std::snprintf(me.host, sizeof me.host, "%s", host.c_str());
  me.state.store(1, std::memory_order_release);
  c.segment->header().joined.fetch_add(1, std::memory_order_acq_rel);
  futex_wake(c.segment->header().joined);
  return wait_for_ranks(c, deadline, why);
}

// This rank's own set-up once every rank is known; an empty string means it succeeded. As in NCCL, the
// others do not wait for it: a rank that fails here leaves them a communicator whose peer never comes (their
// collectives wait until aborted, or until this rank's process is gone).
std::string set_up(CommState& c) {
  if (std::string fault = injected_init_failure(c.rank); !fault.empty()) return fault;
  try {
    CommShape shape{c.rank, c.ranks, c.nodes, c.min_local_ranks, c.max_local_ranks, c.nonce};
    c.profiling = std::make_unique<CommProfiling>(c.nonce, c.nodes, c.ranks, c.rank);
    c.tuning = std::make_unique<CommTuning>(shape);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

#define STANDIN_TEXT(x) #x
#define STANDIN_VERSION_TEXT(a, b, c) STANDIN_TEXT(a) "." STANDIN_TEXT(b) "." STANDIN_TEXT(c)
// The file names its NCCL as real libnccl's does, in a banner the launcher reads without loading it
// (nccl/library_file.hpp): the headers' version. NCCL_STANDIN_VERSION changes only what the process
// reports, as for a library the launcher cannot see, which the plugin must then catch inside the job.
[[gnu::used]] const char kFileBanner[] =
    "NCCL version " STANDIN_VERSION_TEXT(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH) " (stand-in: tests/standin)";

void announce(const CommState& c) {
  static std::once_flag once;
  std::call_once(once, [] {
    log(kLogVersion, kInit, __FILE__, __LINE__, "NCCL version %s+cuda%d.%d (stand-in: tests/standin)",
        nccl::Version::from_code(settings().version_code)->text().c_str(), CUDART_VERSION / 1000,
        CUDART_VERSION % 1000 / 10);
  });
  STANDIN_INFO(kInit, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d",
               static_cast<const void*>(&c), c.rank, c.ranks, c.nodes, c.local_ranks, c.local_rank);
  STANDIN_INFO(kInit | kTuning, "comm %p tuner %s", static_cast<const void*>(&c),
               c.tuning->plugin_text().c_str());
  STANDIN_INFO(kInit, "comm %p profiler %s", static_cast<const void*>(&c),
               c.profiling->plugin_text().c_str());
  STANDIN_INFO(kInit, "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d commId 0x%llx - Init COMPLETE",
               static_cast<const void*>(&c), c.rank, c.ranks, c.device,
               static_cast<unsigned long long>(c.nonce));
}

}  // namespace

void CommState::set_async_error(ncclResult_t code, const std::string& why) {
  int none = ncclSuccess;
  if (async_error_.compare_exchange_strong(none, code))
    STANDIN_WARN("comm %p rank %d: %s", static_cast<void*>(this), rank, why.c_str());
}

bool CommState::should_stop() {
  if (aborted.load() || destroyed.load()) return true;
  SegmentHeader& h = segment->header();
  if (h.failed_rank.load() >= 0) {
    set_async_error(ncclRemoteError, segment->failure());
    return true;
  }
  if (const int by = h.aborted_rank.load(); by >= 0 && by != rank) {
    set_async_error(ncclRemoteError, "rank " + std::to_string(by) + " aborted the communicator");
    return true;
  }
  const int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
  int64_t next = next_liveness_check_.load();
  if (now < next || !next_liveness_check_.compare_exchange_strong(next, now + 200)) return false;
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = segment->slot(r).pid;
    if (pid == getpid() || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;
    segment->fail(r, "its process (pid " + std::to_string(pid) + ") is gone");
    set_async_error(ncclRemoteError, segment->failure());
    return true;
  }
  return false;
}

void CommState::hang_until_abort() const {
  while (!aborted.load() && !destroyed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

ExclusiveRun::ExclusiveRun(CommState& comm, const char* what) : comm_(comm) {
  held_ = !comm_.busy.exchange(true);
  if (held_) return;
  comm_.set_async_error(ncclInvalidUsage, what);
  comm_.hang_until_abort();
}

ExclusiveRun::~ExclusiveRun() {
  if (held_) comm_.busy.store(false);
}

void new_unique_id(ncclUniqueId* id) {
  static std::mutex mutex;
  static std::mt19937_64 random(std::random_device{}() ^ (static_cast<uint64_t>(getpid()) << 32) ^
                                static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  std::lock_guard lock(mutex);
  *id = id_for(random());
}

bool is_standin_id(const ncclUniqueId& id) {
  return std::memcmp(id.internal, kIdMagic, sizeof kIdMagic) == 0;
}

ncclResult_t init_comm(const ncclUniqueId& id, int ranks, int rank, int device,
                       std::shared_ptr<CommState>* out) {
  auto c = std::make_shared<CommState>();
  c->rank = rank;
  c->ranks = ranks;
  c->device = device;
  c->nonce = nonce_of(id);
  set_log_device(device);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(settings().init_timeout_s));
  std::string why;
  try {
    c->segment = SharedSegment::open(segment_name(c->nonce), ranks, settings().stage_bytes, deadline);
  } catch (const std::exception& e) {
    STANDIN_WARN("ncclCommInitRank rank %d: %s", rank, e.what());
    return ncclInvalidUsage;
  }
  if (ncclResult_t r = join(*c, deadline, &why); r != ncclSuccess) {
    c->segment->unlink();  // the communicator will never form: leave nothing in /dev/shm
    STANDIN_WARN("ncclCommInitRank rank %d of %d: %s", rank, ranks, why.c_str());
    return r;
  }
  if (rank == 0) c->segment->unlink();  // every rank has it open now
  lay_out_nodes(*c);
  if (std::string dup = duplicate_gpu(*c); !dup.empty()) {  // every rank sees it
    STANDIN_WARN("ncclCommInitRank rank %d of %d: %s", rank, ranks, dup.c_str());
    return ncclInvalidUsage;
  }
  if (std::string failed = set_up(*c); !failed.empty()) {
    STANDIN_WARN("ncclCommInitRank rank %d of %d: %s", rank, ranks, failed.c_str());
    return ncclSystemError;
  }
  announce(*c);
  *out = std::move(c);
  return ncclSuccess;
}

ncclResult_t split_comm(CommState& parent, int color, int key, std::shared_ptr<CommState>* out) {
  const int parity = static_cast<int>(parent.host_steps++ % 2);
  RankSlot& me = parent.segment->slot(parent.rank);
  me.color[parity] = color;
  me.key[parity] = key;
  if (barrier_wait(parent.segment->header().host_barrier, parent.ranks,
                   [&] { return parent.should_stop(); }) == WaitEnd::stopped) {
    STANDIN_WARN("ncclCommSplit rank %d: the parent communicator failed or was aborted", parent.rank);
    return ncclRemoteError;
  }
  std::vector<std::pair<int, int>> members;  // (key, parent rank) of this colour
  for (int r = 0; r < parent.ranks; ++r) {
    const RankSlot& s = parent.segment->slot(r);
    if (s.color[parity] == color) members.emplace_back(s.key[parity], r);
  }
  const uint64_t split = parent.splits++;
  if (color == NCCL_SPLIT_NOCOLOR) {
    *out = nullptr;
    return ncclSuccess;
  }
  std::sort(members.begin(), members.end());
  const auto self = std::find(members.begin(), members.end(), std::make_pair(key, parent.rank));
  const uint64_t nonce = (parent.nonce ^ (0x9e3779b97f4a7c15ull * (split + 1))) +
                         static_cast<uint64_t>(color) * 0x100000001b3ull;
  return init_comm(id_for(nonce), static_cast<int>(members.size()), static_cast<int>(self - members.begin()),
                   parent.device, out);
}

void abort_comm(CommState& c) {
  c.aborted.store(true);
  int32_t none = -1;
  c.segment->header().aborted_rank.compare_exchange_strong(none, c.rank);
  c.segment->wake_all();
  while (c.running.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  c.tuning.reset();
  c.profiling.reset();
}

void destroy_comm(CommState& c) {
  while (c.running.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  c.destroyed.store(true);
  c.tuning.reset();
  c.profiling.reset();
}

}  // namespace autotune::standin
