#include "tests/standin/nccl/handles.hpp"

#include <mutex>
#include <set>

// nccl.h leaves the struct opaque.
struct ncclComm {
  std::shared_ptr<autotune::standin::CommState> state;
};

namespace autotune::standin {

namespace {

struct Registry {
  std::mutex mutex;
  std::set<ncclComm_t> live;
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: stream workers may outlive static destructors
  return *r;
}

}  // namespace

ncclComm_t make_handle(std::shared_ptr<CommState> state) {
  auto* h = new ncclComm{std::move(state)};
  std::lock_guard lock(registry().mutex);
  registry().live.insert(h);
  return h;
}

std::shared_ptr<CommState> lookup(ncclComm_t handle) {
  std::lock_guard lock(registry().mutex);
  return registry().live.count(handle) ? handle->state : nullptr;
}

std::shared_ptr<CommState> release_handle(ncclComm_t handle) {
  std::lock_guard lock(registry().mutex);
  if (!registry().live.erase(handle)) return nullptr;
  std::shared_ptr<CommState> state = std::move(handle->state);
  delete handle;
  return state;
}

}  // namespace autotune::standin
