// The exported tuner structs, one per ABI version NCCL may look for (v7 first in 2.32.6, v6 first in 2.30,
// v5 first in 2.28, down to v2 in 2.21), each a thin adapter over the one core (tuner_core.hpp). Every entry
// point checks its pointers, catches everything and returns ncclSuccess: an error from init would fail the
// communicator's creation and one from getCollInfo the collective, while leaving NCCL's table alone is always
// safe.

#include <exception>
#include <new>

#include "nccl/tuner_abi.h"
#include "plugins/tuner_core.hpp"

namespace autotune::plugin {
namespace {

void warn(ncclDebugLogger_t log, const char* what) noexcept {
  if (log != nullptr)
    log(NCCL_LOG_WARN, NCCL_TUNING, "autotune", 0, "TUNER/Autotune: init failed, NCCL decides: %s", what);
}

ncclResult_t create(void** ctx, size_t ranks, size_t nodes, ncclDebugLogger_t log, void* constants,
                    int abi_version, const ncclNvlDomainInfo_v5_t* nvl = nullptr) noexcept {
  if (ctx == nullptr) return ncclSuccess;
  *ctx = nullptr;
  try {
    CommInit init;
    init.ranks = ranks;
    init.nodes = nodes;
    init.log = log;
    // NCCL fills one domain per node: the fewest and most ranks of any node (read only when plausible).
    if (nvl != nullptr && nvl->minRanksPerNvlDomain > 0 &&
        nvl->maxRanksPerNvlDomain >= nvl->minRanksPerNvlDomain)
      init.min_ranks_per_node = nvl->minRanksPerNvlDomain,
      init.max_ranks_per_node = nvl->maxRanksPerNvlDomain;
    init.constants = constants;
    init.abi_version = abi_version;
    *ctx = new Communicator(init);
  } catch (const std::exception& e) {
    warn(log, e.what());
  } catch (...) {
    warn(log, "unknown exception");
  }
  return ncclSuccess;
}

const Communicator* comm(void* ctx) noexcept {
  return static_cast<const Communicator*>(ctx);
}

ncclResult_t init_v5(void** ctx, uint64_t /*commId: a hash, not stable across runs*/, size_t nRanks,
                     size_t nNodes, ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t* nvl,
                     ncclTunerConstants_v5_t* constants) noexcept {
  return create(ctx, nRanks, nNodes, log, constants, 5, nvl);
}

ncclResult_t init_v6(void** ctx, uint64_t /*commId*/, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                     ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) noexcept {
  return create(ctx, nRanks, nNodes, log, constants, 6, nvl);
}

ncclResult_t init_v7(void** ctx, uint64_t /*commId*/, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                     ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v7_t* constants) noexcept {
  return create(ctx, nRanks, nNodes, log, constants, 7, nvl);
}

ncclResult_t init_v4(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** ctx) noexcept {
  return create(ctx, nRanks, nNodes, log, nullptr, 4);
}

ncclResult_t init_v3(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** ctx) noexcept {
  return create(ctx, nRanks, nNodes, log, nullptr, 3);
}

ncclResult_t init_v2(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** ctx) noexcept {
  return create(ctx, nRanks, nNodes, log, nullptr, 2);
}

// NCCL passes one contiguous float[numAlgo][numProto] typed as float**: it is never an array of rows.
ncclResult_t coll_info_v4(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                          float** collCostTable, int numAlgo, int numProto, int regBuff,
                          int* nChannels) noexcept {
  if (ctx != nullptr)
    comm(ctx)->steer(collType, nBytes, numPipeOps, regBuff, reinterpret_cast<float*>(collCostTable), numAlgo,
                     numProto, nChannels);
  return ncclSuccess;
}

ncclResult_t coll_info_v3(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                          float** collCostTable, int numAlgo, int numProto, int* nChannels) noexcept {
  if (ctx != nullptr)
    comm(ctx)->steer(collType, nBytes, numPipeOps, profiles::kRegBuffUnknown,
                     reinterpret_cast<float*>(collCostTable), numAlgo, numProto, nChannels);
  return ncclSuccess;
}

ncclResult_t coll_info_v2(void* ctx, ncclFunc_t collType, size_t nBytes, int collNetSupport, int nvlsSupport,
                          int numPipeOps, int* algorithm, int* protocol, int* nChannels) noexcept {
  if (ctx != nullptr)
    comm(ctx)->steer_v2(collType, nBytes, numPipeOps, collNetSupport, nvlsSupport, algorithm, protocol,
                        nChannels);
  return ncclSuccess;
}

// v6/v7: NCCL has picked the algorithm and protocol; *chunkSize holds its own choice and stays unless a rule
// names one. NCCL clamps whatever comes back to its buffers.
ncclResult_t chunk_size(void* ctx, ncclFunc_t collType, size_t nBytes, int algo, int proto, int /*nChannels*/,
                        size_t* chunkSize) noexcept {
  if (ctx != nullptr) comm(ctx)->chunk_size(collType, nBytes, algo, proto, chunkSize);
  return ncclSuccess;
}

ncclResult_t finalize(void* ctx) noexcept {
  delete comm(ctx);  // deleting nullptr is fine; destructors here do not throw
  return ncclSuccess;
}

}  // namespace
}  // namespace autotune::plugin

// Non-const on purpose: a namespace-scope const object has internal linkage in C++.
extern "C" {
using namespace autotune::plugin;

__attribute__((visibility("default")))
ncclTuner_v7_t ncclTunerPlugin_v7 = {kPluginName, init_v7, coll_info_v4, finalize, chunk_size};
__attribute__((visibility("default")))
ncclTuner_v6_t ncclTunerPlugin_v6 = {kPluginName, init_v6, coll_info_v4, finalize, chunk_size};
__attribute__((visibility("default")))
ncclTuner_v5_t ncclTunerPlugin_v5 = {kPluginName, init_v5, coll_info_v4, finalize};
__attribute__((visibility("default")))
ncclTuner_v4_t ncclTunerPlugin_v4 = {kPluginName, init_v4, coll_info_v4, finalize};
__attribute__((visibility("default")))
ncclTuner_v3_t ncclTunerPlugin_v3 = {kPluginName, init_v3, coll_info_v3, finalize};
__attribute__((visibility("default")))
ncclTuner_v2_t ncclTunerPlugin_v2 = {kPluginName, init_v2, coll_info_v2, finalize};
}
