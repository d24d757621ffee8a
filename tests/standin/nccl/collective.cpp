#include "tests/standin/nccl/collective.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "nccl/vocabulary.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/reduction.hpp"
#include "tests/standin/nccl/settings.hpp"

namespace autotune::standin {

namespace {

bool listed(const std::vector<AlgoProto>& list, const TunedChoice& c) {
  return std::any_of(list.begin(), list.end(), [&](const AlgoProto& x) {
    return static_cast<int>(x.first) == c.algorithm && static_cast<int>(x.second) == c.protocol;
  });
}

std::string choice_text(const CollectiveDescriptor& d, bool with_channels) {
  std::string t = std::string(nccl::name(*nccl::algorithm_from_id(d.algorithm))) + "/" +
                  std::string(nccl::name(*nccl::protocol_from_id(d.protocol)));
  return with_channels ? t + "/" + std::to_string(d.channels) + "ch" : t;
}

std::string call_text(const CollectiveDescriptor& d) {
  return std::string(collective_name(d.collective)) + " " + std::to_string(d.count) + " x " +
         type_name(static_cast<ncclDataType_t>(d.datatype)) + " " + op_name(static_cast<ncclRedOp_t>(d.op)) +
         " root " + std::to_string(d.root);
}

bool same_call(const CollectiveDescriptor& a, const CollectiveDescriptor& b) {
  return a.collective == b.collective && a.count == b.count && a.datatype == b.datatype && a.op == b.op &&
         a.root == b.root && a.sequence == b.sequence;
}

// "ranks disagree: rank 0 ring/ll, rank 1 tree/ll" naming the first rank of each variant; "" when all agree.
std::string disagreement(SharedSegment& seg, int parity, int ranks) {
  const CollectiveDescriptor& first = seg.slot(0).descriptor[parity];
  bool calls = false, choices = false, channels = false;
  for (int r = 1; r < ranks; ++r) {
    const CollectiveDescriptor& d = seg.slot(r).descriptor[parity];
    calls = calls || !same_call(d, first);
    choices = choices || d.algorithm != first.algorithm || d.protocol != first.protocol;
    channels = channels || d.channels != first.channels;
  }
  if (!calls && !choices && !channels) return "";
  std::vector<std::string> seen;
  std::string out = "ranks disagree:";
  for (int r = 0; r < ranks; ++r) {
    const CollectiveDescriptor& d = seg.slot(r).descriptor[parity];
    std::string text =
        calls ? call_text(d) + " (" + choice_text(d, channels) + ")" : choice_text(d, channels);
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    out += std::string(seen.empty() ? " " : ", ") + "rank " + std::to_string(r) + " " + text;
    seen.push_back(text);
  }
  return out;
}

// Elements per round: what one rank's staging buffer holds (ReduceScatter stages a piece per peer).
size_t chunk_elements(const CollectiveCall& call, size_t element, size_t stage, int ranks) {
  const size_t per = call.collective == kReduceScatter ? element * static_cast<size_t>(ranks) : element;
  return std::max<size_t>(1, stage / per);
}

void contribute(const CollectiveCall& call, const CommState& c, char* stage, size_t off, size_t len,
                size_t e) {
  const char* send = static_cast<const char*>(call.send);
  switch (call.collective) {
    case kBroadcast:
      if (c.rank == call.root) std::memcpy(stage, send + off * e, len * e);
      break;
    case kReduceScatter:
      for (int r = 0; r < c.ranks; ++r)
        std::memcpy(stage + static_cast<size_t>(r) * len * e,
                    send + (static_cast<size_t>(r) * call.count + off) * e, len * e);
      break;
    default:  // AllReduce, Reduce, AllGather: this rank's piece of its input
      std::memcpy(stage, send + off * e, len * e);
  }
}

// Writes this rank's output for the round; returns where it starts (for a corruption), or null.
char* produce(const CollectiveCall& call, const CommState& c, SharedSegment& seg, int parity, size_t off,
              size_t len, size_t e) {
  char* recv = static_cast<char*>(call.recv);
  std::vector<const char*> sources;
  for (int q = 0; q < c.ranks; ++q) sources.push_back(seg.stage(q, parity));
  switch (call.collective) {
    case kBroadcast:
      std::memcpy(recv + off * e, sources[static_cast<size_t>(call.root)], len * e);
      return recv + off * e;
    case kReduce:
      if (c.rank != call.root) return nullptr;
      [[fallthrough]];
    case kAllReduce:
      reduce(call.type, call.op, sources.data(), c.ranks, recv + off * e, len);
      return recv + off * e;
    case kAllGather:
      for (int q = 0; q < c.ranks; ++q)
        std::memcpy(recv + (static_cast<size_t>(q) * call.count + off) * e, sources[static_cast<size_t>(q)],
                    len * e);
      return recv + (static_cast<size_t>(c.rank) * call.count + off) * e;
    case kReduceScatter:
      for (auto& s : sources) s += static_cast<size_t>(c.rank) * len * e;
      reduce(call.type, call.op, sources.data(), c.ranks, recv + off * e, len);
      return recv + off * e;
  }
  return nullptr;
}

// Above this much per round, AllReduce reduces in two phases as a ring does: each rank reduces its slice of
// the round from every rank's staging into its result buffer, then all copy every slice (a second barrier):
// each rank reads twice the round instead of once per rank.
constexpr size_t kTwoPhaseBytes = 64 << 10;

// Returns false when the wait between the phases was stopped.
bool two_phase_allreduce(const CollectiveCall& call, CommState& c, SharedSegment& seg, int parity, size_t off,
                         size_t len, size_t e) {
  const size_t n = static_cast<size_t>(c.ranks), per = (len + n - 1) / n;
  auto begin = [&](size_t q) { return std::min(len, q * per); };
  auto length = [&](size_t q) { return std::min(len, begin(q) + per) - begin(q); };
  const size_t me = static_cast<size_t>(c.rank);
  std::vector<const char*> sources;
  for (int q = 0; q < c.ranks; ++q) sources.push_back(seg.stage(q, parity) + begin(me) * e);
  reduce(call.type, call.op, sources.data(), c.ranks, seg.result(c.rank, parity), length(me));
  if (barrier_wait(seg.header().data_barrier, c.ranks, [&] { return c.should_stop(); }) == WaitEnd::stopped)
    return false;
  char* recv = static_cast<char*>(call.recv);
  for (size_t q = 0; q < n; ++q)
    std::memcpy(recv + (off + begin(q)) * e, seg.result(static_cast<int>(q), parity), length(q) * e);
  return true;
}

std::atomic<uint64_t>& operations_on_fault_rank() {
  static std::atomic<uint64_t> n{0};
  return n;
}

}  // namespace

size_t send_bytes(const CollectiveCall& call, const CommState& comm) {
  const size_t e = element_size(call.type);
  if (call.collective == kReduceScatter) return call.count * e * static_cast<size_t>(comm.ranks);
  if (call.collective == kBroadcast && comm.rank != call.root) return 0;
  return call.count * e;
}

size_t recv_bytes(const CollectiveCall& call, const CommState& comm) {
  const size_t e = element_size(call.type);
  if (call.collective == kAllGather) return call.count * e * static_cast<size_t>(comm.ranks);
  if (call.collective == kReduce && comm.rank != call.root) return 0;
  return call.count * e;
}

size_t tuner_bytes(const CollectiveCall& call, int ranks) {
  const size_t bytes = call.count * element_size(call.type);
  return call.collective == kAllGather || call.collective == kReduceScatter
             ? bytes * static_cast<size_t>(ranks)
             : bytes;
}

const char* collective_name(int collective) {
  static const char* const kNames[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  return collective >= 0 && collective < 5 ? kNames[collective] : "unknown";
}

double CollectiveWork::run(double start_us) noexcept {
  CommState& c = *comm_;
  c.running.fetch_add(1);
  double end = start_us;
  completed_ = false;
  try {
    // An aborted or destroyed communicator's profiling is gone; its work runs nothing.
    CommProfiling* profiling = c.aborted.load() || c.destroyed.load() ? nullptr : c.profiling.get();
    void* coll_event = !profiling           ? nullptr
                       : profiled_.captured ? profiling->coll_event(profiled_.call)
                                            : profiled_.coll_event;
    end = execute(start_us);
    if (completed_ && coll_event) profiling->channel_events(coll_event, choice_.channels, start_us, end);
  } catch (const std::exception& e) {
    c.set_async_error(ncclInternalError, std::string("stand-in collective: ") + e.what());
    c.hang_until_abort();
  }
  c.running.fetch_sub(1);
  return end;
}

bool injected_async_error(CommState& c) {
  const Faults& faults = settings().faults;
  if (!faults.async_after || c.rank != faults.async_rank ||
      operations_on_fault_rank().fetch_add(1) + 1 != *faults.async_after)
    return false;
  const std::string why = "injected asynchronous error after " + std::to_string(*faults.async_after) +
                          " operation(s) (NCCL_STANDIN_FAULT_ASYNC_AFTER)";
  c.set_async_error(ncclSystemError, why);
  c.segment->fail(c.rank, why);
  return true;
}

// After the first round's barrier: the virtual time the collective ends at when every rank's descriptor
// agrees; nullopt when it must not go on (a disagreement, which fails it on every rank; a hang fault).
std::optional<double> CollectiveWork::agree(int parity) {
  CommState& c = *comm_;
  SharedSegment& seg = *c.segment;
  if (std::string why = disagreement(seg, parity, c.ranks); !why.empty()) {
    c.set_async_error(ncclInvalidUsage, why);
    return std::nullopt;
  }
  if (listed(settings().faults.hang, choice_)) return std::nullopt;  // every rank chose it: every rank hangs
  double latest = 0.0, longest = 0.0;
  for (int r = 0; r < c.ranks; ++r) {
    latest = std::max(latest, seg.slot(r).descriptor[parity].ready_us);
    longest = std::max(longest, seg.slot(r).descriptor[parity].duration_us);
  }
  return latest + longest;
}

void CollectiveWork::describe(int parity, double ready_us) {
  CommState& c = *comm_;
  CollectiveDescriptor& d = c.segment->slot(c.rank).descriptor[parity];
  d = CollectiveDescriptor{.sequence = c.sequence++,
                           .collective = call_.collective,
                           .datatype = static_cast<int32_t>(call_.type),
                           .op = static_cast<int32_t>(call_.op),
                           .root = call_.root,
                           .count = call_.count,
                           .algorithm = choice_.algorithm,
                           .protocol = choice_.protocol,
                           .channels = choice_.channels,
                           .ready_us = ready_us,
                           .duration_us = choice_.duration_us};
}

double CollectiveWork::execute(double start_us) {
  CommState& c = *comm_;
  if (c.aborted.load() || c.destroyed.load()) return start_us;
  const ExclusiveRun exclusive(c, "two collectives ran on one communicator at once (from two streams)");
  if (!exclusive.held()) return start_us;
  // A broken communicator runs nothing more; nor does a collective that cannot complete.
  auto stuck = [&] {
    c.hang_until_abort();
    return start_us;
  };
  if (c.async_error() != ncclSuccess || injected_async_error(c)) return stuck();
  SharedSegment& seg = *c.segment;
  const Faults& faults = settings().faults;
  const size_t e = element_size(call_.type);
  const size_t chunk = chunk_elements(call_, e, seg.stage_bytes(), c.ranks);
  const size_t rounds = std::max<size_t>(1, (call_.count + chunk - 1) / chunk);
  const bool slow = faults.slow_rank && *faults.slow_rank == c.rank;
  double end = start_us;
  for (size_t i = 0; i < rounds; ++i) {
    const int parity = static_cast<int>(c.rounds++ % 2);
    const size_t off = i * chunk, len = std::min(chunk, call_.count - std::min(call_.count, off));
    if (i == 0) describe(parity, start_us + (slow ? (faults.slow_factor - 1.0) * choice_.duration_us : 0.0));
    contribute(call_, c, seg.stage(c.rank, parity), off, len, e);
    if (barrier_wait(seg.header().data_barrier, c.ranks, [&] { return c.should_stop(); }) == WaitEnd::stopped)
      return stuck();
    if (i == 0) {
      const auto agreed = agree(parity);
      if (!agreed) return stuck();
      end = *agreed;
    }
    char* out = nullptr;
    if (call_.collective == kAllReduce && c.ranks > 1 && len * e >= kTwoPhaseBytes) {
      if (!two_phase_allreduce(call_, c, seg, parity, off, len, e)) return stuck();
      out = static_cast<char*>(call_.recv) + off * e;
    } else {
      out = produce(call_, c, seg, parity, off, len, e);
    }
    if (i == 0 && out && len > 0 && (choice_.corrupts || listed(faults.wrong, choice_))) out[0] ^= 0x5a;
  }
  completed_ = true;
  return end;
}

}  // namespace autotune::standin
