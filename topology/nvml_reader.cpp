// NVML through dlopen: the prototypes below are nvml.h's, declared here so that no NVML header or library is
// needed to build (NCCL does the same). Entry points a driver lacks are skipped: their readings stay absent.

#include "topology/nvml_reader.hpp"

#include <chrono>
#include <string>
#include <thread>

#include "topology/dl_library.hpp"
#include "topology/pci_ids.hpp"

namespace autotune::topology::detail {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr unsigned kNvmlMaxLinks = 18;
constexpr nvmlReturn_t kSuccess = 0, kInsufficientSize = 7;
// nvmlMemoryErrorType_t, nvmlEccCounterType_t, nvmlPageRetirementCause_t, nvmlClockType_t,
// nvmlTemperatureSensors_t, nvmlTemperatureThresholds_t, nvmlNvLinkErrorCounter_t.
constexpr int kCorrected = 0, kUncorrected = 1, kVolatile = 0, kAggregate = 1;
constexpr int kRetiredMultipleSbe = 0, kRetiredDbe = 1;
constexpr int kClockSm = 1, kTemperatureGpu = 0, kThresholdSlowdown = 1;
constexpr int kNvLinkReplay = 0, kNvLinkRecovery = 1, kNvLinkCrcFlit = 2, kNvLinkCrcData = 3;

using UIntQuery = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
using IntQuery = nvmlReturn_t (*)(nvmlDevice_t, int*);

// The entry points, looked up once. The topology ones are required; the health ones may be null.
struct Nvml {
  explicit Nvml(const Library& lib)
      : init(lib.get<nvmlReturn_t (*)()>("nvmlInit_v2")),
        shutdown(lib.get<nvmlReturn_t (*)()>("nvmlShutdown")),
        error_string(lib.get<const char* (*)(nvmlReturn_t)>("nvmlErrorString")),
        count(lib.get<nvmlReturn_t (*)(unsigned*)>("nvmlDeviceGetCount_v2")),
        by_index(lib.get<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2")),
        pci_info(lib.get<nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3")),
        link_state(lib.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*)>("nvmlDeviceGetNvLinkState")),
        remote_pci(lib.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned, nvmlPciInfo_t*)>(
            "nvmlDeviceGetNvLinkRemotePciInfo_v2")),
        remote_type(
            lib.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*)>("nvmlDeviceGetNvLinkRemoteDeviceType")),
        ecc_total(lib.get<nvmlReturn_t (*)(nvmlDevice_t, int, int, unsigned long long*)>(
            "nvmlDeviceGetTotalEccErrors")),
        retired_pages(lib.get<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*, unsigned long long*)>(
            "nvmlDeviceGetRetiredPages")),
        retired_pending(lib.get<IntQuery>("nvmlDeviceGetRetiredPagesPendingStatus")),
        remapped_rows(lib.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*)>(
            "nvmlDeviceGetRemappedRows")),
        pcie_replay(lib.get<UIntQuery>("nvmlDeviceGetPcieReplayCounter")),
        curr_gen(lib.get<UIntQuery>("nvmlDeviceGetCurrPcieLinkGeneration")),
        max_gen(lib.get<UIntQuery>("nvmlDeviceGetMaxPcieLinkGeneration")),
        curr_width(lib.get<UIntQuery>("nvmlDeviceGetCurrPcieLinkWidth")),
        max_width(lib.get<UIntQuery>("nvmlDeviceGetMaxPcieLinkWidth")),
        clock_events(lib.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>(
            "nvmlDeviceGetCurrentClocksEventReasons")),
        throttle_reasons(lib.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>(
            "nvmlDeviceGetCurrentClocksThrottleReasons")),
        clock(lib.get<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetClockInfo")),
        max_clock(lib.get<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetMaxClockInfo")),
        temperature(lib.get<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature")),
        temperature_threshold(
            lib.get<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperatureThreshold")),
        power(lib.get<UIntQuery>("nvmlDeviceGetPowerUsage")),
        power_limit(lib.get<UIntQuery>("nvmlDeviceGetEnforcedPowerLimit")),
        power_default_limit(lib.get<UIntQuery>("nvmlDeviceGetPowerManagementDefaultLimit")),
        persistence(lib.get<IntQuery>("nvmlDeviceGetPersistenceMode")),
        nvlink_error(lib.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned, int, unsigned long long*)>(
            "nvmlDeviceGetNvLinkErrorCounter")) {}

  bool has_topology() const {
    return init && shutdown && count && by_index && pci_info && link_state && remote_pci;
  }

  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*count)(unsigned*);
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*);
  nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned, int*);
  nvmlReturn_t (*remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*);
  nvmlReturn_t (*remote_type)(nvmlDevice_t, unsigned, int*);
  nvmlReturn_t (*ecc_total)(nvmlDevice_t, int, int, unsigned long long*);
  nvmlReturn_t (*retired_pages)(nvmlDevice_t, int, unsigned*, unsigned long long*);
  IntQuery retired_pending;
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*);
  UIntQuery pcie_replay, curr_gen, max_gen, curr_width, max_width;
  nvmlReturn_t (*clock_events)(nvmlDevice_t, unsigned long long*);
  nvmlReturn_t (*throttle_reasons)(nvmlDevice_t, unsigned long long*);
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*);
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*);
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*);
  nvmlReturn_t (*temperature_threshold)(nvmlDevice_t, int, unsigned*);
  UIntQuery power, power_limit, power_default_limit;
  IntQuery persistence;
  nvmlReturn_t (*nvlink_error)(nvmlDevice_t, unsigned, int, unsigned long long*);
};

// One query's answer, or nullopt when the entry point is missing or the GPU does not support it.
template <typename T, typename F, typename... Args>
std::optional<T> ask(F fn, Args... args) {
  if (!fn) return std::nullopt;
  T value{};
  if (fn(args..., &value) != kSuccess) return std::nullopt;
  return value;
}

std::optional<uint64_t> ecc(const Nvml& n, nvmlDevice_t d, int type, int counter) {
  auto v = ask<unsigned long long>(n.ecc_total, d, type, counter);
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

std::optional<uint64_t> retired(const Nvml& n, nvmlDevice_t d, int cause) {
  if (!n.retired_pages) return std::nullopt;
  unsigned count = 0;  // 0 asks for the count only
  const nvmlReturn_t r = n.retired_pages(d, cause, &count, nullptr);
  if (r != kSuccess && r != kInsufficientSize) return std::nullopt;
  return count;
}

std::optional<double> watts(const std::optional<unsigned>& milliwatts) {
  return milliwatts ? std::optional<double>(*milliwatts / 1000.0) : std::nullopt;
}

std::optional<int> as_int(const std::optional<unsigned>& v) {
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

GpuHealth gpu_health(const Nvml& n, nvmlDevice_t d) {
  GpuHealth h;
  h.ecc_volatile_corrected = ecc(n, d, kCorrected, kVolatile);
  h.ecc_volatile_uncorrected = ecc(n, d, kUncorrected, kVolatile);
  h.ecc_aggregate_corrected = ecc(n, d, kCorrected, kAggregate);
  h.ecc_aggregate_uncorrected = ecc(n, d, kUncorrected, kAggregate);
  h.retired_pages_sbe = retired(n, d, kRetiredMultipleSbe);
  h.retired_pages_dbe = retired(n, d, kRetiredDbe);
  if (auto p = ask<int>(n.retired_pending, d)) h.retired_pages_pending = *p != 0;
  if (n.remapped_rows) {
    unsigned correctable = 0, uncorrectable = 0, pending = 0, failed = 0;
    if (n.remapped_rows(d, &correctable, &uncorrectable, &pending, &failed) == kSuccess) {
      h.remapped_rows_correctable = correctable;
      h.remapped_rows_uncorrectable = uncorrectable;
      h.row_remap_pending = pending != 0;
      h.row_remap_failed = failed != 0;
    }
  }
  if (auto r = ask<unsigned>(n.pcie_replay, d)) h.pcie_replay = Counter{*r, std::nullopt};
  h.pcie_gen = as_int(ask<unsigned>(n.curr_gen, d));
  h.pcie_gen_max = as_int(ask<unsigned>(n.max_gen, d));
  h.pcie_width = as_int(ask<unsigned>(n.curr_width, d));
  h.pcie_width_max = as_int(ask<unsigned>(n.max_width, d));
  auto reasons = ask<unsigned long long>(n.clock_events, d);
  if (!reasons) reasons = ask<unsigned long long>(n.throttle_reasons, d);
  if (reasons) h.clock_event_reasons = *reasons;
  h.sm_clock_mhz = ask<unsigned>(n.clock, d, kClockSm);
  h.sm_clock_max_mhz = ask<unsigned>(n.max_clock, d, kClockSm);
  h.temperature_c = ask<unsigned>(n.temperature, d, kTemperatureGpu);
  h.temperature_slowdown_c = ask<unsigned>(n.temperature_threshold, d, kThresholdSlowdown);
  h.power_w = watts(ask<unsigned>(n.power, d));
  h.power_limit_w = watts(ask<unsigned>(n.power_limit, d));
  h.power_default_limit_w = watts(ask<unsigned>(n.power_default_limit, d));
  if (auto p = ask<int>(n.persistence, d)) h.persistence_mode = *p != 0;
  return h;
}

std::optional<Counter> nvlink_counter(const Nvml& n, nvmlDevice_t d, unsigned link, int counter) {
  auto v = ask<unsigned long long>(n.nvlink_error, d, link, counter);
  return v ? std::optional<Counter>(Counter{*v, std::nullopt}) : std::nullopt;
}

NvLinkErrors link_errors(const Nvml& n, nvmlDevice_t d, unsigned link) {
  NvLinkErrors e;
  auto flit = nvlink_counter(n, d, link, kNvLinkCrcFlit), data = nvlink_counter(n, d, link, kNvLinkCrcData);
  if (flit || data) e.crc = Counter{(flit ? flit->total : 0) + (data ? data->total : 0), std::nullopt};
  e.replay = nvlink_counter(n, d, link, kNvLinkReplay);
  e.recovery = nvlink_counter(n, d, link, kNvLinkRecovery);
  return e;
}

// A counter read again: how much it grew (a counter that went backwards was reset: count from zero).
void grew(std::optional<Counter>& first, const std::optional<Counter>& again) {
  if (!first || !again) return;
  first->increase = again->total >= first->total ? again->total - first->total : again->total;
}

NvmlLink topology_link(const Nvml& n, nvmlDevice_t dev, unsigned l, int active) {
  NvmlLink link;
  link.link = static_cast<int>(l);
  link.up = active != 0;
  nvmlPciInfo_t remote{};
  if (n.remote_pci(dev, l, &remote) == kSuccess) link.remote_bus_id = normalize_bus_id(remote.busId);
  int type = -1;
  if (n.remote_type && n.remote_type(dev, l, &type) == kSuccess)
    link.remote = type == 0   ? NvmlLink::Remote::gpu
                  : type == 2 ? NvmlLink::Remote::nvswitch
                  : type == 1 ? NvmlLink::Remote::cpu
                              : NvmlLink::Remote::unknown;
  return link;
}

// The second read of every error counter, counter_interval_ms after the first.
void sample_again(const Nvml& n, const std::vector<nvmlDevice_t>& devices, std::vector<NvmlGpu>& gpus) {
  for (size_t i = 0; i < gpus.size(); ++i) {
    NvmlGpu& g = gpus[i];
    if (g.health && n.pcie_replay)
      if (auto r = ask<unsigned>(n.pcie_replay, devices[i])) grew(g.health->pcie_replay, Counter{*r, {}});
    for (auto& link : g.links) {
      const NvLinkErrors again = link_errors(n, devices[i], static_cast<unsigned>(link.link));
      grew(link.errors.crc, again.crc);
      grew(link.errors.replay, again.replay);
      grew(link.errors.recovery, again.recovery);
    }
  }
}

}  // namespace

LibraryAnswer<NvmlGpu> read_nvml(const NvmlRequest& request) {
  LibraryAnswer<NvmlGpu> a;
  Library lib("libnvidia-ml.so.1");
  if (!lib) {
    a.why = "libnvidia-ml.so.1 (NVML, part of the driver) not found: " + lib.error();
    return a;
  }
  const Nvml n(lib);
  if (!n.has_topology()) {
    a.why = "libnvidia-ml.so.1 lacks the NVLink entry points (an old driver?)";
    return a;
  }
  if (nvmlReturn_t r = n.init(); r != kSuccess) {
    a.why = std::string("nvmlInit: ") + (n.error_string ? n.error_string(r) : std::to_string(r).c_str());
    return a;
  }
  unsigned count = 0;
  n.count(&count);
  a.available = true;
  std::vector<nvmlDevice_t> devices;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    nvmlPciInfo_t info{};
    if (n.by_index(i, &dev) != kSuccess || n.pci_info(dev, &info) != kSuccess) continue;
    NvmlGpu g;
    g.pci_bus_id = normalize_bus_id(info.busId);
    for (unsigned l = 0; l < kNvmlMaxLinks; ++l) {
      int active = 0;
      if (n.link_state(dev, l, &active) != kSuccess) continue;  // a link this GPU does not have
      NvmlLink link = topology_link(n, dev, l, active);
      if (request.health) link.errors = link_errors(n, dev, l);
      g.links.push_back(std::move(link));
    }
    if (request.health) g.health = gpu_health(n, dev);
    a.items.push_back(std::move(g));
    devices.push_back(dev);
  }
  if (request.health && request.counter_interval_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(request.counter_interval_ms));
    sample_again(n, devices, a.items);
  }
  n.shutdown();
  return a;
}

}  // namespace autotune::topology::detail
