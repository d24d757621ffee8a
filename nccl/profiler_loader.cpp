#include "nccl/profiler_loader.hpp"

#include <dlfcn.h>
#include <strings.h>

#include "nccl/plugin_names.hpp"

namespace autotune::nccl {

std::vector<int> profiler_versions_looked_up(int code) {
  const int newest = code >= 22900 ? 6 : code >= 22800 ? 5 : code >= 22500 ? 4 : 0;
  std::vector<int> out;
  for (int v = newest; v >= 1; --v) out.push_back(v);
  return out;
}

std::unique_ptr<ProfilerPlugin> ProfilerPlugin::open(const ProfilerOpenOptions& o,
                                                     std::vector<std::string>* log) {
  auto say = [&](const std::string& line) {
    if (log) log->push_back(line);
  };
  if (o.plugin && strcasecmp(o.plugin->c_str(), "none") == 0) {
    say("NCCL_PROFILER_PLUGIN set by environment to " + *o.plugin + ": no profiler plugin");
    return nullptr;
  }
  std::string name;
  void* handle = nullptr;
  for (const std::string& candidate : plugin_library_names("libnccl-profiler", o.plugin)) {
    name = candidate;
    if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    const char* why = dlerror();
    say("PROFILER/Plugin: " + name + ": " + (why ? why : "cannot be opened"));
  }
  if (!handle) return nullptr;
  for (int v : profiler_versions_looked_up(o.nccl_version_code)) {
    const std::string symbol = "ncclProfiler_v" + std::to_string(v);
    const void* found = dlsym(handle, symbol.c_str());
    if (!found) continue;
    if (v < 5) {
      say("PROFILER/Plugin: " + name + " has " + symbol + " only: not imitated here (v5 and v6 are)");
      break;
    }
    std::unique_ptr<ProfilerPlugin> p(new ProfilerPlugin());
    p->handle_ = handle;
    p->version_ = v;
    p->library_ = name;
    p->calls_ = static_cast<const ncclProfiler_v5_t*>(found);
    p->name_ = p->calls_->name ? p->calls_->name : "";
    say("PROFILER/Plugin: Loaded " + p->name_ + " (v" + std::to_string(v) + ") from " + name);
    return p;
  }
  say("PROFILER/Plugin: " + name + " has no profiler struct this NCCL knows");
  dlclose(handle);
  return nullptr;
}

ProfilerPlugin::~ProfilerPlugin() {
  if (handle_) dlclose(handle_);
}

}  // namespace autotune::nccl
