#pragma once
// NCCL's side of the profiler-plugin ABI, for the stand-in NCCL: how NCCL_PROFILER_PLUGIN names a library
// (nccl/plugin_names.hpp: unset tries libnccl-profiler.so, "none" disables, a bare name is retried as
// libnccl-profiler-NAME.so), which struct versions the NCCL release being imitated looks up first (2.28:
// ncclProfiler_v5 first; 2.29 and 2.30: ncclProfiler_v6 first; then down to v1), and the calls NCCL makes:
// init per communicator (with the one process-wide activation mask), startEvent, recordEventState,
// stopEvent, finalize. Only v5 and v6, whose layouts for Coll and KernelCh events are the same, are called;
// a library whose newest struct is older is reported and not used (NCCL's v1-v4 adapters are not imitated).
// (NCCL's last resort, the profiler symbols in a net plugin's library, is not imitated: there is none here.)
// Opening is not thread-safe; an open ProfilerPlugin's calls are as thread-safe as the plugin behind them.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nccl/profiler_abi.h"

namespace autotune::nccl {

// {6, 5, 4, 3, 2, 1} from 2.29, {5, 4, 3, 2, 1} for 2.28 (code 22800..22899); {4,..} before (2.25-2.27).
std::vector<int> profiler_versions_looked_up(int code);

struct ProfilerOpenOptions {
  std::optional<std::string> plugin;  // NCCL_PROFILER_PLUGIN; nullopt when unset
  int nccl_version_code = 22809;
};

class ProfilerPlugin {
 public:
  // nullptr when NCCL would run without a profiler; every step appended to *log (one line each) when given.
  static std::unique_ptr<ProfilerPlugin> open(const ProfilerOpenOptions& options,
                                              std::vector<std::string>* log);
  ~ProfilerPlugin();
  ProfilerPlugin(const ProfilerPlugin&) = delete;
  ProfilerPlugin& operator=(const ProfilerPlugin&) = delete;

  int version() const { return version_; }
  const std::string& name() const { return name_; }
  const std::string& library() const { return library_; }
  const ncclProfiler_v5_t& calls() const { return *calls_; }

 private:
  ProfilerPlugin() = default;
  void* handle_ = nullptr;
  int version_ = 0;
  std::string name_, library_;
  const ncclProfiler_v5_t* calls_ = nullptr;
};

}  // namespace autotune::nccl
