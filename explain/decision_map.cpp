#include "explain/decision_map.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "nccl/chunk_size.hpp"

namespace autotune::explain {
namespace {

std::vector<std::string>* g_plugin_log = nullptr;  // see the header: one map at a time

void record_log(ncclDebugLogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
                const char* fmt, ...) {
  if (g_plugin_log == nullptr || level == NCCL_LOG_TRACE) return;
  char buf[4096];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  g_plugin_log->push_back(std::string(level == NCCL_LOG_WARN ? "WARN " : "INFO ") + buf);
}

class Prober {
 public:
  Prober(const nccl::TunerPlugin& plugin, void* ctx, const CostModel& model, const MapRequest& request,
         uint64_t* calls)
      : plugin_(plugin), ctx_(ctx), model_(model), request_(request), calls_(calls) {}

  // One call as NCCL makes it, remembered: bisection asks for many sizes twice.
  const Decision& at(nccl::Collective c, uint64_t bytes) {
    auto [it, inserted] = seen_.try_emplace(bytes);
    if (inserted) it->second = ask(c, bytes);
    return it->second;
  }
  void forget() { seen_.clear(); }

 private:
  Decision ask(nccl::Collective c, uint64_t bytes) {
    CostTable before = model_(c, bytes), table = before;
    int channels = 0;
    ++*calls_;
    plugin_.get_coll_info(ctx_, static_cast<ncclFunc_t>(c), bytes, request_.pipe_ops, table.data(),
                          request_.reg_buff, &channels);
    Decision d;
    d.by_plugin = table != before || channels != 0;
    d.channels = channels;
    auto pick = nccl::cheapest_entry(table.data());
    if (!pick) {
      d.none = true;
      return d;
    }
    d.algorithm = static_cast<nccl::Algorithm>(pick->algorithm);
    d.protocol = static_cast<nccl::Protocol>(pick->protocol);
    // NCCL's own chunk, as NCCL's buffers allow it at most, goes in; a plugin that names one changes it.
    const size_t nccl_chunk = nccl::max_chunk_bytes(c, d.algorithm, d.protocol, nccl::BufferSizes{});
    size_t chunk = nccl_chunk;
    if (plugin_.get_chunk_size(ctx_, static_cast<ncclFunc_t>(c), bytes, pick->algorithm, pick->protocol,
                               channels, &chunk, nullptr) &&
        chunk != nccl_chunk) {
      d.chunk = chunk;
      d.by_plugin = true;
    }
    return d;
  }

  const nccl::TunerPlugin& plugin_;
  void* ctx_;
  const CostModel& model_;
  const MapRequest& request_;
  uint64_t* calls_;
  std::map<uint64_t, Decision> seen_;
};

// Every size in (lo, hi] where the decision differs from the size before it; at(lo) != at(hi) on entry.
void find_changes(Prober& p, nccl::Collective c, uint64_t lo, uint64_t hi, std::vector<uint64_t>& out) {
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const Decision& m = p.at(c, mid);
    const bool like_lo = m == p.at(c, lo), like_hi = m == p.at(c, hi);
    if (like_lo) {
      lo = mid;
    } else if (like_hi) {
      hi = mid;
    } else {  // a third decision in between: both halves change
      find_changes(p, c, lo, mid, out);
      lo = mid;
    }
  }
  out.push_back(hi);
}

std::vector<uint64_t> probes(const MapRequest& r, nccl::Collective c) {
  std::vector<uint64_t> out = {0, r.max_bytes};
  for (int k = 0; k < 64; ++k) {
    const uint64_t p = uint64_t(1) << k;
    if (p > r.max_bytes) break;
    out.insert(out.end(), {p - 1, p, p + 1});
  }
  if (r.edges)
    for (uint64_t e : r.edges(c)) {
      if (e <= r.max_bytes) out.push_back(e);
      if (e > 0 && e - 1 <= r.max_bytes) out.push_back(e - 1);
    }
  std::erase_if(out, [&](uint64_t v) { return v > r.max_bytes; });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CollectiveMap map_one(Prober& p, const MapRequest& r, nccl::Collective c) {
  const std::vector<uint64_t> sizes = probes(r, c);
  std::vector<uint64_t> starts = {0};
  for (size_t i = 1; i < sizes.size(); ++i)
    if (!(p.at(c, sizes[i - 1]) == p.at(c, sizes[i]))) find_changes(p, c, sizes[i - 1], sizes[i], starts);
  CollectiveMap m;
  m.collective = c;
  for (size_t i = 0; i < starts.size(); ++i) {
    const uint64_t last = i + 1 < starts.size() ? starts[i + 1] - 1 : r.max_bytes;
    m.ranges.push_back({starts[i], last, p.at(c, starts[i])});
  }
  p.forget();
  return m;
}

}  // namespace

std::optional<DecisionMap> map_decisions(const MapRequest& request, const CostModel& model,
                                         std::string* why) {
  DecisionMap out;
  auto plugin = nccl::TunerPlugin::open(request.open, &out.open_log);
  if (!plugin) {
    if (why) *why = out.open_log.empty() ? "no tuner plugin" : out.open_log.back();
    return std::nullopt;
  }
  out.library = plugin->library();
  out.plugin_name = std::string(plugin->name());
  out.abi_version = plugin->version();

  g_plugin_log = &out.plugin_log;
  void* ctx = nullptr;
  ncclNvlDomainInfo_v5_t nvl{request.nodes, request.ranks / std::max(1, request.nodes),
                             request.ranks / std::max(1, request.nodes)};
  ncclTunerConstants_v7_t constants{};  // explain shows decisions; what the plugin writes here is not used
  const ncclResult_t init = plugin->init(&ctx, 0x6578706c61696eull, static_cast<size_t>(request.ranks),
                                         static_cast<size_t>(request.nodes), record_log, &nvl, &constants);
  g_plugin_log = nullptr;
  if (init != ncclSuccess) {
    // NCCL would fail the communicator's creation: there is nothing to explain.
    if (why) *why = "the plugin's init returned " + std::to_string(static_cast<int>(init)) + ": NCCL fails";
    return std::nullopt;
  }
  Prober prober(*plugin, ctx, model, request, &out.calls);
  for (nccl::Collective c : request.collectives) out.collectives.push_back(map_one(prober, request, c));
  plugin->finalize(ctx);
  return out;
}

}  // namespace autotune::explain
