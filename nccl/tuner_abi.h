/* NCCL's tuner-plugin ABI, versions 2 to 7, as NCCL 2.21 through 2.32 call it: our own declaration, written
 * from the facts in ../shared/NCCL-FACTS.md and NCCL's internal headers (not from NCCL's example plugin,
 * whose 2.28 header lacks the last constants table). v7 (NCCL 2.32.6, src/include/plugin/tuner/tuner_v7.h)
 * has v6's functions; only its constants struct differs: a fifth compute-capability row (Rubin) in each of
 * the five bandwidth tables. Plain C, so the harness, the bench and the plugin agree on one layout; the
 * static asserts pin the sizes and offsets NCCL relies on. */
#ifndef NCCL_AUTOTUNE_TUNER_ABI_H
#define NCCL_AUTOTUNE_TUNER_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only the values a tuner returns or compares against; NCCL's ncclResult_t is an int-sized enum. */
typedef enum {
  ncclSuccess = 0,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4
} ncclResult_t;

/* Fixed to int in C++ (NCCL passes an int, and a wrong ABI version can pass anything): an enum without a
 * fixed underlying type cannot hold values beyond its enumerators' range without undefined behaviour. */
#ifdef __cplusplus
typedef enum : int {
#else
typedef enum {
#endif
  ncclFuncBroadcast = 0,
  ncclFuncReduce = 1,
  ncclFuncAllGather = 2,
  ncclFuncReduceScatter = 3,
  ncclFuncAllReduce = 4
} ncclFunc_t;

typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

#define NCCL_INIT 0x1UL
#define NCCL_TUNING 0x40UL

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

#define NCCL_NUM_ALGORITHMS 7 /* Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT */
#define NCCL_NUM_PROTOCOLS 3  /* LL, LL128, Simple */
#define NCCL_ALGO_PROTO_IGNORE -1.0
#define NCCL_NUM_HW_LINKS 3      /* NVLink, PCI, network */
#define NCCL_NUM_TUNING_SCALES 3 /* 1 node, 2 nodes, more */
#define NCCL_NUM_COMPCAPS_V5 4   /* Volta, Ampere, Hopper, Blackwell */
#define NCCL_NUM_COMPCAPS_V7 5   /* ... and Rubin */

/* NCCL 2.28.3+ (v5), 2.30 (v6, same structs) and 2.32.6 (v7, the same NVLink domain info). */
typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

/* [hardware link][algorithm][protocol]: NVLink 0, PCI 1, network 2. The [4][3] tables are
 * [Volta, Ampere, Hopper, Blackwell][1 node, 2 nodes, more]. NCCL pre-fills every field with its defaults. */
typedef struct {
  double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double llMaxBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
  double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
  double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;

/* NCCL 2.32.6+ (v7): the [5][3] tables are [Volta, Ampere, Hopper, Blackwell, Rubin][1 node, 2, more]. NCCL
 * hands a v6 or v5 plugin a v5 copy (the first four rows) and copies those rows back after its init. */
typedef struct {
  double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double llMaxBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
  double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
  double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v7_t;

/* v7's chunk-size callback and the rest as in v6; NCCL's v7 header aliases the NVLink domain info of v5. */
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v7_t* constants);
  ncclResult_t (*getCollInfo)(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* ctx);
  /* Optional (NULL: NCCL keeps its own). NCCL clamps the result to its buffer's limit, then rounds it down to
   * the protocol's grain (nccl/chunk_size.hpp). */
  ncclResult_t (*getChunkSize)(void* ctx, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                               int nChannels, size_t* chunkSize);
} ncclTuner_v7_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* ctx);
  /* Optional (NULL: NCCL keeps its own chunk size). Last member: NCCL's own header puts it after finalize. */
  ncclResult_t (*getChunkSize)(void* ctx, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                               int nChannels, size_t* chunkSize);
} ncclTuner_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* ctx);
} ncclTuner_v5_t;

/* NCCL 2.24+. */
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** ctx);
  ncclResult_t (*getCollInfo)(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*destroy)(void* ctx);
} ncclTuner_v4_t;

/* NCCL 2.22.3+: v4 without regBuff. */
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** ctx);
  ncclResult_t (*getCollInfo)(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int* nChannels);
  ncclResult_t (*destroy)(void* ctx);
} ncclTuner_v3_t;

/* NCCL 2.21+: no cost table; the plugin names the algorithm and protocol itself. */
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** ctx);
  ncclResult_t (*getCollInfo)(void* ctx, ncclFunc_t collType, size_t nBytes, int collNetSupport,
                              int nvlsSupport, int numPipeOps, int* algorithm, int* protocol, int* nChannels);
  ncclResult_t (*destroy)(void* ctx);
} ncclTuner_v2_t;

#ifdef __cplusplus
}
static_assert(sizeof(ncclTunerConstants_v5_t) == 1152,
              "ncclTunerConstants_v5_t must match NCCL's 1152 bytes");
static_assert(sizeof(ncclTunerConstants_v7_t) == 1272,
              "ncclTunerConstants_v7_t must match NCCL's 1272 bytes");
/* 21 + 63 doubles of latencies come first in both; the bandwidth tables follow, 12 or 15 doubles each. */
static_assert(offsetof(ncclTunerConstants_v7_t, llMaxBws) == 672 &&
                  offsetof(ncclTunerConstants_v5_t, llMaxBws) == 672,
              "the latencies take 84 doubles");
static_assert(offsetof(ncclTunerConstants_v7_t, perChMaxNVLSTreeBws) == 672 + 4 * 120,
              "v7's bandwidth tables are [5][3]");
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws) == 672 + 4 * 96,
              "v5's bandwidth tables are [4][3]");
static_assert(offsetof(ncclTuner_v7_t, getChunkSize) == 4 * sizeof(void*),
              "getChunkSize follows finalize, as in NCCL's header");
static_assert(sizeof(ncclNvlDomainInfo_v5_t) == 12, "ncclNvlDomainInfo_v5_t must match NCCL's 12 bytes");
static_assert(sizeof(ncclResult_t) == sizeof(int), "ncclResult_t is an int-sized enum");
#else
_Static_assert(sizeof(ncclTunerConstants_v5_t) == 1152,
               "ncclTunerConstants_v5_t must match NCCL's 1152 bytes");
_Static_assert(sizeof(ncclTunerConstants_v7_t) == 1272,
               "ncclTunerConstants_v7_t must match NCCL's 1272 bytes");
#endif

#endif
