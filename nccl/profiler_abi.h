/* NCCL's profiler-plugin ABI, versions 5 and 6, as NCCL 2.28 (v5 first) and 2.29-2.30 (v6 first) call it:
 * our own declaration, written from the facts in ../shared/NCCL-FACTS.md ("Profiler plugin ABI", checked
 * against NCCL's src/include/plugin/profiler/profiler_v5.h and _v6.h at v2.28.9-1, v2.29.7-1, v2.30.7-1).
 * Only what the autotune plugin reads is named; the descriptor's union is padded to NCCL's size so the
 * offsets of the members we read are NCCL's (the static asserts pin them). v6 has v5's functions and layout
 * for every event this plugin asks for (its additions are copy-engine events, which it never activates).
 * Plain C, so the plugin, the stand-in NCCL and the bench agree on one layout. Needs tuner_abi.h first
 * (ncclResult_t, ncclDebugLogger_t). */
#ifndef NCCL_AUTOTUNE_PROFILER_ABI_H
#define NCCL_AUTOTUNE_PROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "nccl/tuner_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event types: the bits of the activation mask and the descriptor's `type`. Asking for a child event turns
 * on its ancestors in NCCL (KernelCh also gives GroupApi, CollApi, Group and Coll events). */
enum {
  ncclProfileGroup = 1 << 0,
  ncclProfileColl = 1 << 1,
  ncclProfileP2p = 1 << 2,
  ncclProfileProxyOp = 1 << 3,
  ncclProfileProxyStep = 1 << 4,
  ncclProfileProxyCtrl = 1 << 5,
  ncclProfileKernelCh = 1 << 6,
  ncclProfileNetPlugin = 1 << 7,
  ncclProfileGroupApi = 1 << 8,
  ncclProfileCollApi = 1 << 9,
  ncclProfileP2pApi = 1 << 10,
  ncclProfileKernelLaunch = 1 << 11
};

/* An int-sized enum in NCCL; only the state this plugin acts on is named. */
typedef int ncclProfilerEventState_t;
#define NCCL_PROFILER_KERNEL_CH_STOP 22 /* ncclProfilerKernelChStop: args carry the stop pTimer */

typedef struct {
  uint64_t seqNumber; /* per communicator and collective function, from 0; alike on every rank */
  const char* func;   /* "AllReduce", ... */
  const void* sendBuff;
  void* recvBuff;
  size_t count; /* bytes for AllGather and Broadcast (datatype "ncclInt8") */
  int root;
  const char* datatype; /* "ncclFloat32", ... */
  uint8_t nChannels;    /* the channels the collective actually uses */
  uint8_t nWarps;
  const char* algo;  /* "RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT" */
  const char* proto; /* "LL", "LL128", "SIMPLE" */
  void* parentGroup;
} ncclProfilerCollDescr_v5_t;

typedef struct {
  uint8_t channelId;
  uint64_t pTimer; /* GPU start time (%globaltimer, ns) */
} ncclProfilerKernelChDescr_v5_t;

typedef struct {
  uint64_t type; /* one ncclProfile* bit */
  void* parentObj;
  int rank;
  union {
    ncclProfilerCollDescr_v5_t coll;
    ncclProfilerKernelChDescr_v5_t kernelCh;
    char size_as_nccl[88]; /* NCCL's union is as large as its coll member */
  };
} ncclProfilerEventDescr_v5_t;

typedef union {
  struct {
    uint64_t pTimer; /* GPU stop time for NCCL_PROFILER_KERNEL_CH_STOP */
  } kernelCh;
  uint64_t size_as_nccl;
} ncclProfilerEventStateArgs_v5_t;

/* v6 reads every member above at the same offsets; its union adds copy-engine members of no larger size. */
typedef ncclProfilerEventDescr_v5_t ncclProfilerEventDescr_v6_t;
typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                       int nNodes, int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

typedef ncclProfiler_v5_t ncclProfiler_v6_t;

#ifdef __cplusplus
}
static_assert(sizeof(ncclProfilerEventDescr_v5_t) == 112, "NCCL's descriptor is 112 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.seqNumber) == 24, "coll.seqNumber");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.count) == 56, "coll.count");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.datatype) == 72, "coll.datatype");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.nChannels) == 80, "coll.nChannels");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.algo) == 88, "coll.algo");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.proto) == 96, "coll.proto");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.parentGroup) == 104, "coll.parentGroup");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, kernelCh.pTimer) == 32, "kernelCh.pTimer");
static_assert(sizeof(ncclProfilerEventStateArgs_v5_t) == 8, "state args");
static_assert(sizeof(ncclProfiler_v5_t) == 48, "ncclProfiler_v5_t");
#endif

#endif /* NCCL_AUTOTUNE_PROFILER_ABI_H */
