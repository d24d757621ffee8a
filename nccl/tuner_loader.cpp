#include "nccl/tuner_loader.hpp"

#include <dlfcn.h>
#include <strings.h>

#include <cstring>

#include "nccl/vocabulary.hpp"

namespace autotune::nccl {
namespace {

constexpr const char* kSymbols[] = {"",
                                    "",
                                    "ncclTunerPlugin_v2",
                                    "ncclTunerPlugin_v3",
                                    "ncclTunerPlugin_v4",
                                    "ncclTunerPlugin_v5",
                                    "ncclTunerPlugin_v6",
                                    "ncclTunerPlugin_v7"};
constexpr int kNewestVersion = 7;

// NCCL's own conversion between the v5 and v7 constants: the latencies whole, the first four rows of each
// bandwidth table (the v5 struct has no Rubin row).
template <typename To, typename From>
void copy_rows(To& to, const From& from) {
  std::memcpy(to.baseLatencies, from.baseLatencies, sizeof to.baseLatencies);
  std::memcpy(to.hwLatencies, from.hwLatencies, sizeof to.hwLatencies);
  constexpr size_t rows = sizeof(ncclTunerConstants_v5_t::llMaxBws);
  std::memcpy(to.llMaxBws, from.llMaxBws, rows);
  std::memcpy(to.perChMaxRingLL128Bws, from.perChMaxRingLL128Bws, rows);
  std::memcpy(to.perChMaxTreeLL128Bws, from.perChMaxTreeLL128Bws, rows);
  std::memcpy(to.perChMaxTreeBws, from.perChMaxTreeBws, rows);
  std::memcpy(to.perChMaxNVLSTreeBws, from.perChMaxNVLSTreeBws, rows);
}

float (*cells(float* table))[kNumProtocols] {
  return reinterpret_cast<float(*)[kNumProtocols]>(table);
}

// A bare name NCCL retries with its prefix: no '/', and not already a lib*.so file name.
bool is_bare_name(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return false;
  const bool library_file = name.rfind("lib", 0) == 0 && name.size() >= 3 && name.ends_with(".so");
  return !library_file;
}

void* try_open(const std::string& name, std::vector<std::string>* log) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle && log) {
    const char* why = dlerror();
    log->push_back("TUNER/Plugin: " + name + ": " + (why ? why : "cannot be opened"));
  }
  return handle;
}

// v2 cannot see the table: NCCL tells it which of NVLS and CollNet the table leaves usable.
int nvls_support(float* table) {
  const auto t = cells(table);
  return t[static_cast<int>(Algorithm::nvls)][static_cast<int>(Protocol::simple)] != NCCL_ALGO_PROTO_IGNORE ||
                 t[static_cast<int>(Algorithm::nvls_tree)][static_cast<int>(Protocol::simple)] !=
                     NCCL_ALGO_PROTO_IGNORE
             ? 1
             : 0;
}
int collnet_support(float* table) {
  return cells(table)[static_cast<int>(Algorithm::collnet_chain)][static_cast<int>(Protocol::simple)] ==
                 NCCL_ALGO_PROTO_IGNORE
             ? 0
             : 1;
}

}  // namespace

std::vector<int> tuner_versions_looked_up(int code) {
  int newest = code >= 23206   ? 7
               : code >= 23000 ? 6
               : code >= 22803 ? 5
               : code >= 22400 ? 4
               : code >= 22203 ? 3
               : code >= 22100 ? 2
                               : 0;
  std::vector<int> out;
  for (int v = newest; v >= 2; --v) out.push_back(v);
  return out;
}

std::unique_ptr<TunerPlugin> TunerPlugin::open(const TunerOpenOptions& o, std::vector<std::string>* log) {
  auto say = [&](const std::string& line) {
    if (log) log->push_back(line);
  };
  if (o.plugin && strcasecmp(o.plugin->c_str(), "none") == 0) {
    say("NCCL_TUNER_PLUGIN set by environment to " + *o.plugin + ": no tuner plugin");
    return nullptr;
  }
  std::string name = o.plugin && !o.plugin->empty() ? *o.plugin : "libnccl-tuner.so";
  void* handle = try_open(name, log);
  if (!handle && o.plugin && is_bare_name(*o.plugin)) {
    name = "libnccl-tuner-" + *o.plugin + ".so";
    handle = try_open(name, log);
  }
  if (!handle) {
    say("TUNER/Plugin: no tuner plugin opened: NCCL's own choices");
    return nullptr;
  }
  std::vector<int> versions =
      o.only_version ? std::vector<int>{*o.only_version} : tuner_versions_looked_up(o.nccl_version_code);
  for (int v : versions) {
    if (v < 2 || v > kNewestVersion) continue;
    const void* symbol = dlsym(handle, kSymbols[v]);
    if (!symbol) continue;
    std::unique_ptr<TunerPlugin> p(new TunerPlugin());
    p->handle_ = handle;
    p->version_ = v;
    p->library_ = name;
    p->symbol_ = symbol;
    // Every version's struct starts with the name.
    const char* const* plugin_name = static_cast<const char* const*>(symbol);
    p->name_ = *plugin_name ? *plugin_name : "";
    say("TUNER/Plugin: Using " + p->name_ + " (v" + std::to_string(v) + ") from " + name);
    return p;
  }
  say("TUNER/Plugin: external tuner plugin " + name + " is unsupported (no struct version this NCCL knows)");
  dlclose(handle);
  return nullptr;
}

TunerPlugin::~TunerPlugin() {
  if (handle_) dlclose(handle_);
}

ncclResult_t TunerPlugin::init(void** context, uint64_t comm_id, size_t ranks, size_t nodes,
                               ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t* nvl,
                               ncclTunerConstants_v7_t* constants) const {
  if (version_ == 7)
    return static_cast<const ncclTuner_v7_t*>(symbol_)->init(context, comm_id, ranks, nodes, log, nvl,
                                                             constants);
  if (version_ < 5 || constants == nullptr)
    return init(context, comm_id, ranks, nodes, log, nvl, static_cast<ncclTunerConstants_v5_t*>(nullptr));
  ncclTunerConstants_v5_t older;
  copy_rows(older, *constants);
  const ncclResult_t r = init(context, comm_id, ranks, nodes, log, nvl, &older);
  copy_rows(*constants, older);
  return r;
}

ncclResult_t TunerPlugin::init(void** context, uint64_t comm_id, size_t ranks, size_t nodes,
                               ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t* nvl,
                               ncclTunerConstants_v5_t* constants) const {
  switch (version_) {
    case 7: {
      if (constants == nullptr)
        return static_cast<const ncclTuner_v7_t*>(symbol_)->init(context, comm_id, ranks, nodes, log, nvl,
                                                                 nullptr);
      ncclTunerConstants_v7_t newer{};
      copy_rows(newer, *constants);
      const ncclResult_t r =
          static_cast<const ncclTuner_v7_t*>(symbol_)->init(context, comm_id, ranks, nodes, log, nvl, &newer);
      copy_rows(*constants, newer);
      return r;
    }
    case 6:
      return static_cast<const ncclTuner_v6_t*>(symbol_)->init(context, comm_id, ranks, nodes, log, nvl,
                                                               constants);
    case 5:
      return static_cast<const ncclTuner_v5_t*>(symbol_)->init(context, comm_id, ranks, nodes, log, nvl,
                                                               constants);
    case 4:
      return static_cast<const ncclTuner_v4_t*>(symbol_)->init(ranks, nodes, log, context);
    case 3:
      return static_cast<const ncclTuner_v3_t*>(symbol_)->init(ranks, nodes, log, context);
    case 2:
      return static_cast<const ncclTuner_v2_t*>(symbol_)->init(ranks, nodes, log, context);
  }
  return ncclInternalError;
}

ncclResult_t TunerPlugin::get_coll_info(void* context, ncclFunc_t collective, size_t bytes, int pipe_ops,
                                        float* table, int reg_buff, int* channels) const {
  float** as_nccl = reinterpret_cast<float**>(table);  // NCCL passes the contiguous table this way
  switch (version_) {
    case 7:
      return static_cast<const ncclTuner_v7_t*>(symbol_)->getCollInfo(
          context, collective, bytes, pipe_ops, as_nccl, kNumAlgorithms, kNumProtocols, reg_buff, channels);
    case 6:
      return static_cast<const ncclTuner_v6_t*>(symbol_)->getCollInfo(
          context, collective, bytes, pipe_ops, as_nccl, kNumAlgorithms, kNumProtocols, reg_buff, channels);
    case 5:
      return static_cast<const ncclTuner_v5_t*>(symbol_)->getCollInfo(
          context, collective, bytes, pipe_ops, as_nccl, kNumAlgorithms, kNumProtocols, reg_buff, channels);
    case 4:
      return static_cast<const ncclTuner_v4_t*>(symbol_)->getCollInfo(
          context, collective, bytes, pipe_ops, as_nccl, kNumAlgorithms, kNumProtocols, reg_buff, channels);
    case 3:
      return static_cast<const ncclTuner_v3_t*>(symbol_)->getCollInfo(
          context, collective, bytes, pipe_ops, as_nccl, kNumAlgorithms, kNumProtocols, channels);
    case 2: {
      int algorithm = -1, protocol = -1;
      ncclResult_t r = static_cast<const ncclTuner_v2_t*>(symbol_)->getCollInfo(
          context, collective, bytes, collnet_support(table), nvls_support(table), pipe_ops, &algorithm,
          &protocol, channels);
      if (r != ncclSuccess) return r;
      if (algorithm >= 0 && algorithm < kNumAlgorithms && protocol >= 0 && protocol < kNumProtocols &&
          cells(table)[algorithm][protocol] != NCCL_ALGO_PROTO_IGNORE)
        cells(table)[algorithm][protocol] = 0.0f;
      return ncclSuccess;
    }
  }
  return ncclInternalError;
}

ncclResult_t TunerPlugin::finalize(void* context) const {
  switch (version_) {
    case 7:
      return static_cast<const ncclTuner_v7_t*>(symbol_)->finalize(context);
    case 6:
      return static_cast<const ncclTuner_v6_t*>(symbol_)->finalize(context);
    case 5:
      return static_cast<const ncclTuner_v5_t*>(symbol_)->finalize(context);
    case 4:
      return static_cast<const ncclTuner_v4_t*>(symbol_)->destroy(context);
    case 3:
      return static_cast<const ncclTuner_v3_t*>(symbol_)->destroy(context);
    case 2:
      return static_cast<const ncclTuner_v2_t*>(symbol_)->destroy(context);
  }
  return ncclInternalError;
}

bool TunerPlugin::get_chunk_size(void* context, ncclFunc_t collective, size_t bytes, int algorithm,
                                 int protocol, int channels, size_t* chunk, ncclResult_t* result) const {
  // v7 lays its getChunkSize out as v6 does (static_asserts in tuner_abi.h).
  decltype(ncclTuner_v6_t::getChunkSize) fn = nullptr;
  if (version_ == 6) fn = static_cast<const ncclTuner_v6_t*>(symbol_)->getChunkSize;
  if (version_ == 7) fn = static_cast<const ncclTuner_v7_t*>(symbol_)->getChunkSize;
  if (!fn) return false;
  ncclResult_t r = fn(context, collective, bytes, algorithm, protocol, channels, chunk);
  if (result) *result = r;
  return true;
}

std::optional<TableChoice> cheapest_entry(const float* table) {
  std::optional<TableChoice> best;
  float best_time = 0.0f;
  for (int a = 0; a < kNumAlgorithms; ++a)
    for (int p = 0; p < kNumProtocols; ++p) {
      const float t = table[a * kNumProtocols + p];
      if (t >= 0.0f && (!best || t < best_time)) best = TableChoice{a, p}, best_time = t;
    }
  return best;
}

}  // namespace autotune::nccl
