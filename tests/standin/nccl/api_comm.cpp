// NCCL entry points for versions, unique ids, communicators, groups and errors (README.md lists them with
// what each does), and the symbol by which the stand-in identifies itself.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/standin/nccl/comm.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/group.hpp"
#include "tests/standin/nccl/handles.hpp"
#include "tests/standin/nccl/settings.hpp"

using namespace autotune::standin;

namespace {

ncclResult_t current_device(int* device) {
  if (cudaError_t e = cudaGetDevice(device); e != cudaSuccess) {
    STANDIN_WARN("Cuda failure '%s'", cudaGetErrorString(e));
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

ncclResult_t check_rank(int nranks, int rank) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    STANDIN_WARN("Invalid rank requested : %d/%d", rank, nranks);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

ncclResult_t init_rank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  if (comm == nullptr) return group_error(ncclInvalidArgument);
  if (ncclResult_t r = check_rank(nranks, rank); r != ncclSuccess) return group_error(r);
  if (!is_standin_id(id)) {
    STANDIN_WARN("ncclCommInitRank: the unique id does not come from this stand-in's ncclGetUniqueId");
    return group_error(ncclInvalidArgument);
  }
  int device = 0;
  if (ncclResult_t r = current_device(&device); r != ncclSuccess) return group_error(r);
  *comm = nullptr;
  return group_error(run_or_defer_creation([=] {
    std::shared_ptr<CommState> state;
    ncclResult_t r = init_comm(id, nranks, rank, device, &state);
    if (r == ncclSuccess) *comm = make_handle(std::move(state));
    return r;
  }));
}

// For ncclCommInitAll: every device valid and named once.
ncclResult_t check_devices(int ndev, const std::vector<int>& devices) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  for (int i = 0; i < ndev; ++i) {
    if (devices[static_cast<size_t>(i)] < 0 || devices[static_cast<size_t>(i)] >= count) {
      STANDIN_WARN("Invalid device %d (%d CUDA device(s))", devices[static_cast<size_t>(i)], count);
      return ncclInvalidArgument;
    }
    if (std::count(devices.begin(), devices.end(), devices[static_cast<size_t>(i)]) > 1) {
      STANDIN_WARN("Duplicate device %d in the device list", devices[static_cast<size_t>(i)]);
      return ncclInvalidUsage;
    }
  }
  return ncclSuccess;
}

}  // namespace

extern "C" {

// The stand-in says what it is through this symbol: the NCCL runner labels what it measures with it as
// "standin", never "measured".
const char* nccl_standin_identity(void) {
  return "nccl-autotune stand-in NCCL (tests/standin): collectives on host memory, times from the simulator";
}

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = settings().version_code;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return ncclInvalidArgument;
  new_unique_id(id);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  return init_rank(comm, nranks, id, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t*) {
  // Blocking and non-blocking alike complete before returning (ncclSuccess is allowed for both).
  return init_rank(comm, nranks, id, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev < 1) return ncclInvalidArgument;
  std::vector<int> devices(static_cast<size_t>(ndev));
  for (int i = 0; i < ndev; ++i) devices[static_cast<size_t>(i)] = devlist ? devlist[i] : i;
  if (ncclResult_t r = check_devices(ndev, devices); r != ncclSuccess) return r;
  ncclUniqueId id;
  new_unique_id(&id);
  std::vector<std::shared_ptr<CommState>> states(static_cast<size_t>(ndev));
  std::vector<ncclResult_t> results(static_cast<size_t>(ndev), ncclSuccess);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev; ++i)
    threads.emplace_back([&, i] {
      results[static_cast<size_t>(i)] =
          init_comm(id, ndev, i, devices[static_cast<size_t>(i)], &states[static_cast<size_t>(i)]);
    });
  for (auto& t : threads) t.join();
  for (ncclResult_t r : results)
    if (r != ncclSuccess) {
      for (auto& s : states)
        if (s) abort_comm(*s);
      std::fill(comms, comms + ndev, nullptr);
      return r;
    }
  for (int i = 0; i < ndev; ++i) comms[i] = make_handle(std::move(states[static_cast<size_t>(i)]));
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t*) {
  std::shared_ptr<CommState> parent = lookup(comm);
  if (!parent || newcomm == nullptr) {
    STANDIN_WARN("ncclCommSplit: invalid communicator or newcomm");
    return group_error(ncclInvalidArgument);
  }
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
    STANDIN_WARN("ncclCommSplit: color %d is negative and not NCCL_SPLIT_NOCOLOR", color);
    return group_error(ncclInvalidArgument);
  }
  *newcomm = nullptr;
  return group_error(run_or_defer_creation([=] {
    std::shared_ptr<CommState> child;
    ncclResult_t r = split_comm(*parent, color, key, &child);
    if (r == ncclSuccess && child) *newcomm = make_handle(std::move(child));
    return r;
  }));
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return lookup(comm) ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  std::shared_ptr<CommState> state = release_handle(comm);
  if (!state) return ncclInvalidArgument;
  destroy_comm(*state);
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  std::shared_ptr<CommState> state = release_handle(comm);
  if (!state) return ncclInvalidArgument;
  abort_comm(*state);
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t) {
  thread_local std::string text;
  text = last_warning();
  return text.c_str();
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (!state || async_error == nullptr) return ncclInvalidArgument;
  *async_error = state->async_error();
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (!state || count == nullptr) return ncclInvalidArgument;
  *count = state->ranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (!state || device == nullptr) return ncclInvalidArgument;
  *device = state->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (!state || rank == nullptr) return ncclInvalidArgument;
  *rank = state->rank;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart(void) {
  group_start();
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  if (!in_group()) {
    STANDIN_WARN("ncclGroupEnd: not in a group call");
    return ncclInvalidUsage;
  }
  return group_end();
}

}  // extern "C"
