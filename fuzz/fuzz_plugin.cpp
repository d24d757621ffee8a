// Fuzzes the NCCL tuner plugin as NCCL (or a wrong NCCL version) could call it: a fuzzed profile written to a
// file that NCCL_AUTOTUNE_PROFILE names, then init, getCollInfo and (v6/v7) getChunkSize through one ABI
// version (v2..v7) with
// fuzzed arguments: collective ids out of range, huge and zero sizes, wrong table dimensions, NULL pointers
// NCCL never passes. The plugin is compiled in (its adapters are the exported structs). It must never crash
// and always return ncclSuccess; it may change a cost-table entry only from a usable time (>= 0) to 0.0,
// never revive a disabled one, may only set a channel count in 1..64, and getChunkSize either leaves NCCL's
// chunk or names a non-zero one.
//
// Input: a 16-byte header, then the profile text.
//   [0] ABI version (2 + v % 6)      [1] collective id (% 8)       [2..9] nBytes (little-endian)
//   [10] numPipeOps (int8)           [11] NULL flags (see below)   [12] numAlgo (int8)   [13] numProto (int8)
//   [14] nRanks   [15] nNodes

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nccl/tuner_abi.h"

extern "C" {
extern ncclTuner_v7_t ncclTunerPlugin_v7;
extern ncclTuner_v6_t ncclTunerPlugin_v6;
extern ncclTuner_v5_t ncclTunerPlugin_v5;
extern ncclTuner_v4_t ncclTunerPlugin_v4;
extern ncclTuner_v3_t ncclTunerPlugin_v3;
extern ncclTuner_v2_t ncclTunerPlugin_v2;
}

namespace {

enum : uint8_t {
  kNullCtxOut = 1,     // init's void** ctx
  kNullLog = 2,        // logger
  kNullNvl = 4,        // v5/v6 NVLink domain info
  kNullConstants = 8,  // v5/v6 tuning constants
  kNullTable = 16,     // getCollInfo's cost table
  kNullChannels = 32,  // getCollInfo's nChannels (and v2's algorithm/protocol)
  kNullCtxIn = 64,     // getCollInfo's ctx
  kRegBuff = 128,
};

std::string g_dir;
unsigned long g_counter = 0;

void log_sink(ncclDebugLogLevel, unsigned long, const char*, int, const char* fmt, ...) {
  if (!fmt) std::abort();  // the plugin must always pass a format
}

[[noreturn]] void fail(const char* what, int version) {
  std::fprintf(stderr, "plugin v%d: %s\n", version, what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/autotune-fuzz-plugin-XXXXXX";
  if (!mkdtemp(tmpl)) std::abort();
  g_dir = tmpl;
  unsetenv("NCCL_TUNER_CONFIG_FILE");
  unsetenv("NCCL_AUTOTUNE_INSECURE");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 16) return 0;
  const int version = 2 + data[0] % 6;
  // plugins/tuner_abi.h declares ncclFunc_t as a plain C enum (Broadcast 0 .. AllReduce 4), whose C++ value
  // range is 0..7: loading anything outside it is undefined in C++ before the plugin even sees it. So ids
  // 5..7 (P2P, which NCCL never passes to a tuner) are the out-of-range ids fuzzed here.
  const int collective = data[1] % 8;
  uint64_t bytes = 0;
  std::memcpy(&bytes, data + 2, 8);
  const int pipe_ops = static_cast<int8_t>(data[10]);
  const uint8_t nulls = data[11];
  const int num_algo = static_cast<int8_t>(data[12]);
  const int num_proto = static_cast<int8_t>(data[13]);
  const size_t ranks = data[14], nodes = data[15];

  // A fresh file name per input: the plugin caches profiles by file, and a reused name could hand back the
  // previous input's profile.
  const std::string path = g_dir + "/p" + std::to_string(g_counter++) + ".toml";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data + 16, 1, size - 16, f);
    std::fclose(f);
  }
  setenv("NCCL_AUTOTUNE_PROFILE", path.c_str(), 1);

  ncclDebugLogger_t log = (nulls & kNullLog) ? nullptr : log_sink;
  ncclNvlDomainInfo_v5_t nvl{1, static_cast<int>(ranks), static_cast<int>(ranks)};
  ncclTunerConstants_v7_t constants{};  // v5/v6 get the first part of it: the v5 struct is its prefix in size
  void* ctx = nullptr;
  void** ctx_out = (nulls & kNullCtxOut) ? nullptr : &ctx;
  ncclNvlDomainInfo_v5_t* nvl_arg = (nulls & kNullNvl) ? nullptr : &nvl;
  ncclTunerConstants_v7_t* constants_v7 = (nulls & kNullConstants) ? nullptr : &constants;
  auto* constants_arg = reinterpret_cast<ncclTunerConstants_v5_t*>(constants_v7);
  ncclResult_t rc = ncclInternalError;
  switch (version) {
    case 7:
      rc = ncclTunerPlugin_v7.init(ctx_out, 7, ranks, nodes, log, nvl_arg, constants_v7);
      break;
    case 6:
      rc = ncclTunerPlugin_v6.init(ctx_out, 7, ranks, nodes, log, nvl_arg, constants_arg);
      break;
    case 5:
      rc = ncclTunerPlugin_v5.init(ctx_out, 7, ranks, nodes, log, nvl_arg, constants_arg);
      break;
    case 4:
      rc = ncclTunerPlugin_v4.init(ranks, nodes, log, ctx_out);
      break;
    case 3:
      rc = ncclTunerPlugin_v3.init(ranks, nodes, log, ctx_out);
      break;
    default:
      rc = ncclTunerPlugin_v2.init(ranks, nodes, log, ctx_out);
      break;
  }
  unlink(path.c_str());
  if (rc != ncclSuccess) fail("init returned an error", version);
  for (const double* d = &constants.baseLatencies[0][0];
       d < &constants.baseLatencies[0][0] + sizeof constants / sizeof(double); ++d)
    if (!std::isfinite(*d)) fail("init wrote a non-finite tuning constant", version);

  // A table shaped as the call declares it (a wrong NCCL could declare other dimensions), filled like NCCL:
  // usable entries hold a time, the others -1.
  const int rows = num_algo < 0 ? 0 : num_algo > 16 ? 16 : num_algo;
  const int cols = num_proto < 0 ? 0 : num_proto > 8 ? 8 : num_proto;
  std::vector<float> table(static_cast<size_t>(rows * cols) + 1);
  for (size_t i = 0; i < table.size(); ++i) table[i] = (bytes >> (i % 64)) & 1 ? -1.0f : 5.0f + i;
  const std::vector<float> before = table;
  float** cost = (nulls & kNullTable) ? nullptr : reinterpret_cast<float**>(table.data());
  int channels = 0, algorithm = -1, protocol = -1;
  int* channels_arg = (nulls & kNullChannels) ? nullptr : &channels;
  void* call_ctx = (nulls & kNullCtxIn) ? nullptr : ctx;
  const auto coll = static_cast<ncclFunc_t>(collective);
  const int reg = (nulls & kRegBuff) ? 1 : 0;
  for (int call = 0; call < 2; ++call) {
    switch (version) {
      case 7:
        rc = ncclTunerPlugin_v7.getCollInfo(call_ctx, coll, bytes, pipe_ops, cost, num_algo, num_proto, reg,
                                            channels_arg);
        break;
      case 6:
        rc = ncclTunerPlugin_v6.getCollInfo(call_ctx, coll, bytes, pipe_ops, cost, num_algo, num_proto, reg,
                                            channels_arg);
        break;
      case 5:
        rc = ncclTunerPlugin_v5.getCollInfo(call_ctx, coll, bytes, pipe_ops, cost, num_algo, num_proto, reg,
                                            channels_arg);
        break;
      case 4:
        rc = ncclTunerPlugin_v4.getCollInfo(call_ctx, coll, bytes, pipe_ops, cost, num_algo, num_proto, reg,
                                            channels_arg);
        break;
      case 3:
        rc = ncclTunerPlugin_v3.getCollInfo(call_ctx, coll, bytes, pipe_ops, cost, num_algo, num_proto,
                                            channels_arg);
        break;
      default:
        rc = ncclTunerPlugin_v2.getCollInfo(call_ctx, coll, bytes, nulls & 1, (nulls >> 1) & 1, pipe_ops,
                                            (nulls & kNullChannels) ? nullptr : &algorithm,
                                            (nulls & kNullChannels) ? nullptr : &protocol, channels_arg);
        break;
    }
    if (rc != ncclSuccess) fail("getCollInfo returned an error", version);
  }
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] == before[i]) continue;
    if (i == table.size() - 1) fail("getCollInfo wrote past the declared table", version);
    if (before[i] < 0) fail("getCollInfo revived an entry NCCL disabled", version);
    if (table[i] != 0.0f) fail("getCollInfo wrote a cost other than 0.0", version);
  }
  if (channels < 0 || channels > 64) fail("getCollInfo set a channel count outside 0..64", version);
  if (version >= 6) {
    // NCCL asks for the chunk of what it runs: any algorithm and protocol id a wrong NCCL could pass.
    size_t chunk = 131072;
    auto fn = version == 7 ? ncclTunerPlugin_v7.getChunkSize : ncclTunerPlugin_v6.getChunkSize;
    rc = fn(call_ctx, coll, bytes, num_algo, num_proto, channels, (nulls & kNullChannels) ? nullptr : &chunk);
    if (rc != ncclSuccess) fail("getChunkSize returned an error", version);
    if (chunk == 0) fail("getChunkSize named a chunk of 0 bytes", version);
  }
  if (version == 2 && algorithm != -1 && (algorithm < 0 || algorithm >= NCCL_NUM_ALGORITHMS))
    fail("getCollInfo (v2) named an algorithm out of range", version);
  if (version == 2 && protocol != -1 && (protocol < 0 || protocol >= NCCL_NUM_PROTOCOLS))
    fail("getCollInfo (v2) named a protocol out of range", version);

  if (ctx_out) {
    switch (version) {
      case 7:
        rc = ncclTunerPlugin_v7.finalize(ctx);
        break;
      case 6:
        rc = ncclTunerPlugin_v6.finalize(ctx);
        break;
      case 5:
        rc = ncclTunerPlugin_v5.finalize(ctx);
        break;
      case 4:
        rc = ncclTunerPlugin_v4.destroy(ctx);
        break;
      case 3:
        rc = ncclTunerPlugin_v3.destroy(ctx);
        break;
      default:
        rc = ncclTunerPlugin_v2.destroy(ctx);
        break;
    }
    if (rc != ncclSuccess) fail("finalize returned an error", version);
  }
  return 0;
}
