#pragma once
// NCCL's side of the tuner-plugin ABI, for the programs that must call a tuner exactly as NCCL does (the
// stand-in NCCL in tests/standin, `nccl-autotune explain`): how NCCL_TUNER_PLUGIN names a library and how
// NCCL opens it, which struct versions the NCCL release being imitated looks for and in which order, and
// every version behind one interface shaped like the newest one (init with the communicator id, the NVLink
// domain info and the constants; getCollInfo on one contiguous float[7][3] cost table). Older versions are
// wrapped the way NCCL wraps them: v2 names an algorithm and protocol itself, which become a 0.0 entry when
// NCCL had that entry usable. Facts: ../shared/NCCL-FACTS.md, "Tuner plugin ABI".
// Opening is not thread-safe; an open TunerPlugin's calls are as thread-safe as the plugin behind them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl/tuner_abi.h"

namespace autotune::nccl {

// The struct versions an NCCL release looks up, first found wins: 2.21 {2}, 2.22.3 {3, 2}, 2.24 {4, 3, 2},
// 2.28.3 {5, 4, 3, 2}, 2.30 {6, 5, 4, 3, 2}, 2.32.6 {7, 6, 5, 4, 3, 2} (2.31 and 2.32.3 still start at v6:
// their src/plugin/tuner.cc has no v7). Empty before 2.21 (no tuner plugins). `code` is NCCL's version
// code (22809 for 2.28.9).
std::vector<int> tuner_versions_looked_up(int code);

struct TunerOpenOptions {
  std::optional<std::string> plugin;  // the value of NCCL_TUNER_PLUGIN; nullopt when it is unset
  int nccl_version_code = 22809;      // which NCCL to imitate (the symbol lookup order)
  std::optional<int> only_version;    // look up this struct version alone (tests of one ABI version)
};

class TunerPlugin {
 public:
  // Opens the plugin as NCCL would: "none" (any case) disables; otherwise the value is dlopen'ed as given
  // (RTLD_NOW | RTLD_LOCAL; unset means "libnccl-tuner.so"), and a bare name that is neither a path nor a
  // lib*.so file name is tried again as libnccl-tuner-<name>.so. Returns nullptr when NCCL would run without
  // a tuner (disabled, nothing opened, no struct it knows). Every step is appended to *log, as one line each,
  // when log is not null. (NCCL's last resort, the tuner symbols in a net plugin's library, is not imitated:
  // there is no net plugin where this runs.)
  static std::unique_ptr<TunerPlugin> open(const TunerOpenOptions& options, std::vector<std::string>* log);
  ~TunerPlugin();
  TunerPlugin(const TunerPlugin&) = delete;
  TunerPlugin& operator=(const TunerPlugin&) = delete;

  int version() const { return version_; }
  std::string_view name() const { return name_; }
  const std::string& library() const { return library_; }  // the name it was opened by

  // v2-v4 get ranks, nodes and the logger only; nvl and constants go to v5 and later. As NCCL 2.32.6 does,
  // a v7 plugin gets the v7 struct itself and a v5/v6 plugin a v5 copy of its first four rows, which are
  // copied back after init (the Rubin row stays as it came). `constants` may be NULL.
  ncclResult_t init(void** context, uint64_t comm_id, size_t ranks, size_t nodes, ncclDebugLogger_t log,
                    ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v7_t* constants) const;
  // As an NCCL before 2.32.6 does, with the v5 struct. A v7 plugin then gets a v7 copy whose Rubin row is
  // zero (such an NCCL has none), and its first four rows are copied back.
  ncclResult_t init(void** context, uint64_t comm_id, size_t ranks, size_t nodes, ncclDebugLogger_t log,
                    ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) const;
  // No constants struct at all (as `nullptr` reads without naming a version).
  ncclResult_t init(void** context, uint64_t comm_id, size_t ranks, size_t nodes, ncclDebugLogger_t log,
                    ncclNvlDomainInfo_v5_t* nvl, std::nullptr_t) const {
    return init(context, comm_id, ranks, nodes, log, nvl, static_cast<ncclTunerConstants_v5_t*>(nullptr));
  }
  // `table` is the contiguous [kNumAlgorithms][kNumProtocols] cost table; *channels comes in as 0.
  ncclResult_t get_coll_info(void* context, ncclFunc_t collective, size_t bytes, int pipe_ops, float* table,
                             int reg_buff, int* channels) const;
  ncclResult_t finalize(void* context) const;
  // v6's and v7's optional getChunkSize; false (and *chunk untouched) when the plugin has none. NCCL then
  // clamps and aligns what came back (nccl/chunk_size.hpp); this does not.
  bool get_chunk_size(void* context, ncclFunc_t collective, size_t bytes, int algorithm, int protocol,
                      int channels, size_t* chunk, ncclResult_t* result) const;

 private:
  TunerPlugin() = default;
  void* handle_ = nullptr;
  int version_ = 0;
  std::string name_;
  std::string library_;
  const void* symbol_ = nullptr;  // the ncclTuner_vN_t found
};

// What NCCL takes from the cost table after the plugin returned: the smallest entry >= 0, scanning algorithms
// then protocols in index order with a strict < (ties go to the lower index). nullopt when none is >= 0.
struct TableChoice {
  int algorithm = -1;
  int protocol = -1;
  bool operator==(const TableChoice&) const = default;
};
std::optional<TableChoice> cheapest_entry(const float* table);

}  // namespace autotune::nccl
