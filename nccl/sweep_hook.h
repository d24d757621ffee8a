/* The sweep hook: how the search engine, in its own measuring process, forces NCCL's choice for the next
 * collectives through the loaded tuner plugin, and learns what NCCL allowed. Plain C so that the NCCL runner
 * can dlsym it from the plugin that NCCL loaded (it is never linked). Off until nccl_autotune_force is
 * called. Thread-safe: the forced choice is process-wide and read atomically by every getCollInfo call. */
#ifndef NCCL_AUTOTUNE_SWEEP_HOOK_H
#define NCCL_AUTOTUNE_SWEEP_HOOK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCL_AUTOTUNE_HOOK_VERSION 1

/* What the last getCollInfo call saw and did. */
typedef struct {
  uint64_t calls; /* getCollInfo calls since the last nccl_autotune_force */
  int collective; /* ncclFunc_t of the last call */
  size_t bytes;   /* nBytes of the last call */
  int algorithm;  /* forced algorithm, or what NCCL's table would pick if nothing was forced (-1 unknown) */
  int protocol;
  int channels; /* what *nChannels was left at */
  int forced;   /* 1 when a forced choice was applied to the last call */
  int refused;  /* 1 when a forced choice was asked for but NCCL had marked that entry unusable (-1):
                   the forced candidate is "unsupported here" and NCCL kept its own choice */
} nccl_autotune_seen_t;

/* Force algorithm/protocol (NCCL ids; -1 for both = stop forcing) and channels (0 = NCCL decides) for every
 * following collective in this process. Resets the counters read by nccl_autotune_last. Returns 0, or -1 for
 * ids out of range (then nothing changes). */
int nccl_autotune_force(int algorithm, int protocol, int channels);

/* Copies what the last getCollInfo call saw into *out. Returns 0, or -1 when out is NULL. */
int nccl_autotune_last(nccl_autotune_seen_t* out);

/* NCCL_AUTOTUNE_HOOK_VERSION of the loaded plugin, so a caller can refuse a mismatched one. */
int nccl_autotune_hook_version(void);

#ifdef __cplusplus
}
#endif

#endif
