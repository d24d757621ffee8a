/* Loads the tuner plugin the way NCCL does and proves it brings nothing heavy into the process.
 * NCCL_TUNER_PLUGIN: "none" disables; a value is dlopen'ed as given (absolute path or library name), then as
 * libnccl-tuner-<value>.so; unset, libnccl-tuner.so. RTLD_NOW | RTLD_LOCAL. Symbols in NCCL 2.30's order.
 * Written in C so that this process has no C++ runtime of its own: after loading, libstdc++ must still be
 * absent (the plugin carries its own, statically), and so must CUDA, NCCL, hwloc and MPI. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/tuner_abi.h"

static int info_lines = 0;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                   ...) {
  (void)file;
  (void)line;
  va_list args;
  va_start(args, fmt);
  printf("log level=%d flags=0x%lx: ", (int)level, flags);
  vprintf(fmt, args);
  printf("\n");
  va_end(args);
  if (level == NCCL_LOG_INFO && (flags & NCCL_TUNING)) ++info_lines;
}

int main(void) {
  const char* value = getenv("NCCL_TUNER_PLUGIN");
  if (value && strcmp(value, "none") == 0) {
    printf("tuner plugin disabled\n");
    return 0;
  }
  static const char* heavy[] = {"libcuda.so.1",    "libcudart.so.13", "libcudart.so.12",
                                "libnccl.so.2",    "libhwloc.so.15",  "libmpi.so.40",
                                "libibverbs.so.1", "libstdc++.so.6",  "libgcc_s.so.1"};
  enum { kHeavy = sizeof heavy / sizeof heavy[0] };
  /* A sanitizer runtime may bring libstdc++ itself; what matters is what the plugin adds. */
  int present_before[kHeavy];
  for (int i = 0; i < kHeavy; ++i) present_before[i] = dlopen(heavy[i], RTLD_NOW | RTLD_NOLOAD) != NULL;
  char name[4096];
  void* handle = NULL;
  if (value) {
    snprintf(name, sizeof name, "%s", value);
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      snprintf(name, sizeof name, "libnccl-tuner-%s.so", value);
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    }
  } else {
    snprintf(name, sizeof name, "libnccl-tuner.so");
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle) {
    printf("FAIL: could not load the tuner plugin: %s\n", dlerror());
    return 1;
  }
  static const char* symbols[] = {"ncclTunerPlugin_v6", "ncclTunerPlugin_v5", "ncclTunerPlugin_v4",
                                  "ncclTunerPlugin_v3", "ncclTunerPlugin_v2"};
  int version = 0;
  void* sym = NULL;
  for (int i = 0; i < 5 && !sym; ++i) {
    sym = dlsym(handle, symbols[i]);
    if (sym) version = 6 - i;
  }
  if (!sym || version != 6) {
    printf("FAIL: expected ncclTunerPlugin_v6, found v%d\n", version);
    return 1;
  }
  ncclTuner_v6_t* tuner = (ncclTuner_v6_t*)sym;
  void* ctx = NULL;
  ncclTunerConstants_v5_t constants;
  memset(&constants, 0, sizeof constants);
  ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
  if (tuner->init(&ctx, 42, 8, 1, logger, &nvl, &constants) != ncclSuccess) {
    printf("FAIL: init\n");
    return 1;
  }
  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; ++a)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; ++p) table[a][p] = a == 1 ? 10.0f + p : -1.0f;
  int channels = 0;
  if (tuner->getCollInfo(ctx, ncclFuncAllReduce, 4096, 1, (float**)table, NCCL_NUM_ALGORITHMS,
                         NCCL_NUM_PROTOCOLS, 0, &channels) != ncclSuccess ||
      tuner->finalize(ctx) != ncclSuccess) {
    printf("FAIL: getCollInfo/finalize\n");
    return 1;
  }
  if (info_lines != 1) {
    printf("FAIL: expected one INFO line from init, got %d\n", info_lines);
    return 1;
  }
  for (int i = 0; i < kHeavy; ++i) {
    if (!present_before[i] && dlopen(heavy[i], RTLD_NOW | RTLD_NOLOAD)) {
      printf("FAIL: loading the plugin brought %s into the process\n", heavy[i]);
      return 1;
    }
  }
  printf("loaded tuner '%s' v%d from %s; no CUDA, no C++ runtime\n", tuner->name, version, name);
  return 0;
}
