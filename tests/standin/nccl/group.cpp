#include "tests/standin/nccl/group.hpp"

#include <map>
#include <thread>
#include <utility>
#include <vector>

namespace autotune::standin {

namespace {

struct GroupState {
  int depth = 0;
  ncclResult_t error = ncclSuccess;
  std::vector<Deferred> creations;
  std::vector<Deferred> collectives;
  std::map<std::pair<const CommState*, cudaStream_t>, std::shared_ptr<std::vector<P2pOp>>> p2p;
};

GroupState& group() {
  thread_local GroupState g;
  return g;
}

ncclResult_t run_creations(std::vector<Deferred>& creations) {
  if (creations.size() == 1) return creations.front()();
  std::vector<ncclResult_t> results(creations.size(), ncclSuccess);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < creations.size(); ++i) threads.emplace_back([&, i] { results[i] = creations[i](); });
  for (auto& t : threads) t.join();
  for (ncclResult_t r : results)
    if (r != ncclSuccess) return r;
  return ncclSuccess;
}

}  // namespace

bool in_group() {
  return group().depth > 0;
}

void group_start() {
  ++group().depth;
}

ncclResult_t group_end() {
  GroupState& g = group();
  if (g.depth == 0) return ncclInvalidUsage;
  if (--g.depth > 0) return ncclSuccess;
  std::vector<Deferred> creations = std::move(g.creations), collectives = std::move(g.collectives);
  ncclResult_t r = g.error;
  g = GroupState{};
  if (r != ncclSuccess) return r;
  if (!creations.empty()) r = run_creations(creations);
  for (auto& launch : collectives) {
    if (r != ncclSuccess) break;
    r = launch();
  }
  return r;
}

ncclResult_t run_or_defer_creation(Deferred fn) {
  if (!in_group()) return fn();
  group().creations.push_back(std::move(fn));
  return ncclSuccess;
}

ncclResult_t run_or_defer_collective(Deferred fn) {
  if (!in_group()) return fn();
  group().collectives.push_back(std::move(fn));
  return ncclSuccess;
}

ncclResult_t run_or_defer_p2p(const std::shared_ptr<CommState>& comm, cudaStream_t stream, const P2pOp& op) {
  if (!in_group()) return launch_p2p(comm, stream, {op});
  auto& ops = group().p2p[{comm.get(), stream}];
  if (!ops) {
    ops = std::make_shared<std::vector<P2pOp>>();
    group().collectives.push_back([comm, stream, ops] { return launch_p2p(comm, stream, std::move(*ops)); });
  }
  ops->push_back(op);
  return ncclSuccess;
}

ncclResult_t group_error(ncclResult_t r) {
  if (r != ncclSuccess && in_group() && group().error == ncclSuccess) group().error = r;
  return r;
}

}  // namespace autotune::standin
