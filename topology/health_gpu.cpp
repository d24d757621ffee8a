// Findings about GPUs: NVML's memory, clock, thermal and power readings, NVLink state and error counters,
// PCIe link training (NVML's view where read, else sysfs) and replays, and a node mixing GPU models.

#include <algorithm>
#include <map>
#include <set>

#include "topology/health_detail.hpp"

namespace autotune::topology::detail {
namespace {

constexpr uint64_t kRetiredPagesLimit = 63;    // DCGM_LIMIT_MAX_RETIRED_PAGES
constexpr double kNvLinkCrcPerSecond = 100.0;  // DCGM_LIMIT_MAX_NVLINK_CRC_ERROR
constexpr double kPcieReplaysPerMinute = 8.0;  // DCGM_LIMIT_MAX_PCIREPLAY_RATE
constexpr double kSmClockLowFraction = 0.7;

std::string gpu_name(const Gpu& g) {
  return "GPU" + std::to_string(g.index);
}

std::string reasons_text(uint64_t bits) {
  static const std::pair<uint64_t, const char*> kNames[] = {{clock_event::hw_slowdown, "HW slowdown"},
                                                            {clock_event::hw_thermal, "HW thermal slowdown"},
                                                            {clock_event::sw_thermal, "SW thermal slowdown"},
                                                            {clock_event::hw_power_brake, "HW power brake"},
                                                            {clock_event::sw_power_cap, "SW power cap"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (bits & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// Whether the GPU said it is idle (nullopt: it did not say): idle GPUs lower clocks and PCIe generation.
std::optional<bool> idle(const GpuHealth& h) {
  if (!h.clock_event_reasons) return std::nullopt;
  return (*h.clock_event_reasons & clock_event::gpu_idle) != 0;
}

void memory(const Gpu& g, const GpuHealth& h, FindingSink& sink) {
  const std::string dev = gpu_name(g);
  if (h.ecc_volatile_uncorrected.value_or(0) > 0)
    sink.add("ecc_uncorrected", dev,
             "volatile uncorrected ECC errors: " + std::to_string(*h.ecc_volatile_uncorrected), "nvml",
             dev + " has " + std::to_string(*h.ecc_volatile_uncorrected) +
                 " uncorrected ECC errors since the driver loaded (DCGM fails any): drain the node, reset "
                 "the GPU");
  const uint64_t retired = h.retired_pages_sbe.value_or(0) + h.retired_pages_dbe.value_or(0);
  if ((h.retired_pages_sbe || h.retired_pages_dbe) && retired >= kRetiredPagesLimit)
    sink.add("retired_pages_limit", dev, "retired pages: " + std::to_string(retired), "nvml",
             dev + " has retired " + std::to_string(retired) +
                 " pages (DCGM fails at 63): the GPU needs replacing");
  if (h.retired_pages_pending.value_or(false))
    sink.add("retired_pages_pending", dev, "page retirement pending", "nvml",
             dev + " has a page retirement pending: reset the GPU (or reboot) for it to take effect");
  if (h.row_remap_failed.value_or(false))
    sink.add("row_remap_failed", dev, "row remapping failed", "nvml",
             dev + " failed to remap a memory row (DCGM fails it): the GPU needs replacing");
  if (h.row_remap_pending.value_or(false))
    sink.add("row_remap_pending", dev, "row remapping pending", "nvml",
             dev + " has a row remapping pending: reset the GPU for it to take effect");
}

void clocks_and_power(const Gpu& g, const GpuHealth& h, FindingSink& sink) {
  const std::string dev = gpu_name(g);
  const uint64_t reasons = h.clock_event_reasons.value_or(0);
  const uint64_t slowdown = clock_event::hw_slowdown | clock_event::hw_thermal | clock_event::sw_thermal |
                            clock_event::hw_power_brake;
  if (reasons & slowdown)
    sink.add("clock_throttled", dev, "clock-event reasons: " + reasons_text(reasons & slowdown), "nvml",
             dev + " clocks are held down by " + reasons_text(reasons & slowdown) +
                 ": check cooling and power delivery before measuring");
  if (reasons & clock_event::sw_power_cap)
    sink.add("clock_power_capped", dev, "clock-event reasons: SW power cap", "nvml",
             dev + " is at its power cap: measurements will be lower than the hardware can do");
  // A low clock with a slowdown or power cap behind it is reported as that; this is for the rest
  // (application clocks set low, a clock lock).
  if (!(reasons & (slowdown | clock_event::sw_power_cap)) && h.sm_clock_mhz && h.sm_clock_max_mhz &&
      *h.sm_clock_max_mhz > 0 && idle(h) == false &&
      *h.sm_clock_mhz < kSmClockLowFraction * *h.sm_clock_max_mhz)
    sink.add(
        "sm_clock_low", dev,
        "SM clock " + std::to_string(*h.sm_clock_mhz) + " of " + std::to_string(*h.sm_clock_max_mhz) + " MHz",
        "nvml",
        dev + " runs its SM clock at " + std::to_string(*h.sm_clock_mhz) + " MHz of " +
            std::to_string(*h.sm_clock_max_mhz) + " while busy (below 70%): check application clocks");
  if (h.temperature_c && h.temperature_slowdown_c && *h.temperature_slowdown_c > 0 &&
      *h.temperature_c >= *h.temperature_slowdown_c)
    sink.add("temperature_high", dev,
             "temperature " + std::to_string(*h.temperature_c) + " C, slowdown at " +
                 std::to_string(*h.temperature_slowdown_c) + " C",
             "nvml",
             dev + " is at " + std::to_string(*h.temperature_c) + " C, at or above its slowdown threshold");
  if (h.power_limit_w && h.power_default_limit_w && *h.power_limit_w + 0.5 < *h.power_default_limit_w)
    sink.add("power_limit_reduced", dev,
             "power limit " + format_number(*h.power_limit_w) + " W, default " +
                 format_number(*h.power_default_limit_w) + " W",
             "nvml",
             dev + " power limit is " + format_number(*h.power_limit_w) + " W, below its default " +
                 format_number(*h.power_default_limit_w) +
                 " W (nvidia-smi -pl): restore it before calibrating");
  if (h.persistence_mode == false)
    sink.add("persistence_mode_off", dev, "persistence mode disabled", "nvml",
             dev +
                 " has persistence mode off: run nvidia-persistenced so that every job start does not "
                 "re-initialise the GPU");
}

void nvlinks(const Topology& t, const Gpu& g, FindingSink& sink) {
  const double seconds = t.health.counter_interval_ms / 1000.0;
  for (const auto& l : g.nvlinks) {
    const std::string dev = "NVLink " + std::to_string(l.link) + " of " + gpu_name(g);
    if (!l.up) {
      sink.add("nvlink_down", dev, "link state: inactive", "nvml", dev + " is down");
      continue;
    }
    const auto grew = [](const std::optional<Counter>& c) { return c && c->increase.value_or(0) > 0; };
    const bool crc_rate = seconds > 0 && l.errors.crc && l.errors.crc->increase &&
                          *l.errors.crc->increase / seconds >= kNvLinkCrcPerSecond;
    if (grew(l.errors.replay) || grew(l.errors.recovery) || crc_rate) {
      std::string reading;
      if (grew(l.errors.replay)) reading += "replay +" + std::to_string(*l.errors.replay->increase);
      if (grew(l.errors.recovery))
        reading += (reading.empty() ? "" : ", ") + std::string("recovery +") +
                   std::to_string(*l.errors.recovery->increase);
      if (crc_rate)
        reading += (reading.empty() ? "" : ", ") + std::string("CRC ") +
                   format_number(*l.errors.crc->increase / seconds) + "/s";
      reading += " in " + std::to_string(t.health.counter_interval_ms) + " ms";
      sink.add("nvlink_errors", dev, reading, "nvml",
               dev + " is taking errors now (" + reading + "): DCGM fails this");
      continue;
    }
    const uint64_t replay = l.errors.replay ? l.errors.replay->total : 0;
    const uint64_t recovery = l.errors.recovery ? l.errors.recovery->total : 0;
    if (replay + recovery > 0)
      sink.add("nvlink_error_history", dev,
               "replay errors " + std::to_string(replay) + ", recovery errors " + std::to_string(recovery),
               "nvml",
               dev + " has had " + std::to_string(replay) + " replay and " + std::to_string(recovery) +
                   " recovery errors since the driver loaded: watch it (dcgmi health)");
  }
}

// The expected PCIe link from sysfs: the GPU's own maximum where known, else the best any GPU of its model
// has.
PcieLink expected_link(const Topology& t, const Gpu& g) {
  if (g.link_max.width > 0) return g.link_max;
  PcieLink best;
  for (const auto& o : t.gpus)
    if (o.pci_device_id == g.pci_device_id) {
      best.width = std::max({best.width, o.link.width, o.link_max.width});
      best.speed_gts = std::max({best.speed_gts, o.link.speed_gts, o.link_max.speed_gts});
    }
  return best;
}

void pcie(const Topology& t, const Gpu& g, FindingSink& sink) {
  const std::string dev = gpu_name(g) + " (" + g.pci_bus_id + ")";
  const GpuHealth* h = g.health ? &*g.health : nullptr;
  const bool busy_or_unknown = !h || idle(*h) != true;
  if (h && h->pcie_width && h->pcie_width_max) {
    if (*h->pcie_width < *h->pcie_width_max)
      sink.add("pcie_width_degraded", dev,
               "PCIe x" + std::to_string(*h->pcie_width) + " of x" + std::to_string(*h->pcie_width_max),
               "nvml",
               dev + " trained at PCIe x" + std::to_string(*h->pcie_width) + ", expected x" +
                   std::to_string(*h->pcie_width_max) + ": reseat or replace the card or riser");
    if (h->pcie_gen && h->pcie_gen_max && *h->pcie_gen < *h->pcie_gen_max && busy_or_unknown)
      sink.add("pcie_gen_degraded", dev,
               "PCIe gen " + std::to_string(*h->pcie_gen) + " of " + std::to_string(*h->pcie_gen_max), "nvml",
               dev + " runs PCIe gen " + std::to_string(*h->pcie_gen) + ", expected gen " +
                   std::to_string(*h->pcie_gen_max) + " (recheck under load: idle GPUs lower it)");
  } else if (g.link.width > 0 || g.link.speed_gts > 0) {
    const PcieLink expected = expected_link(t, g);
    const std::string reading = "PCIe x" + std::to_string(g.link.width) + " at " +
                                format_number(g.link.speed_gts) + " GT/s, maximum x" +
                                std::to_string(expected.width) + " at " + format_number(expected.speed_gts) +
                                " GT/s";
    if (g.link.width > 0 && g.link.width < expected.width)
      sink.add("pcie_width_degraded", dev, reading, tree_source(t),
               dev + " runs " + reading + ": reseat or replace the card or riser");
    else if (g.link.speed_gts > 0 && g.link.speed_gts + 0.01 < expected.speed_gts && busy_or_unknown)
      sink.add("pcie_gen_degraded", dev, reading, tree_source(t),
               dev + " runs " + reading + " (recheck under load: idle GPUs lower the link speed)");
  }
  const double seconds = t.health.counter_interval_ms / 1000.0;
  if (h && h->pcie_replay && h->pcie_replay->increase && seconds > 0) {
    const double per_minute = *h->pcie_replay->increase * 60.0 / seconds;
    if (per_minute > kPcieReplaysPerMinute)
      sink.add("pcie_replay_rate", dev, "PCIe replays: " + format_number(per_minute) + " per minute", "nvml",
               dev + " replays " + format_number(per_minute) +
                   " PCIe packets per minute (DCGM warns above 8): check the slot and riser");
  }
}

void mixed_models(const Topology& t, FindingSink& sink) {
  std::set<std::string> models;
  for (const auto& g : t.gpus)
    models.insert(!g.name.empty()   ? g.name
                  : g.pci_device_id ? "device " + std::to_string(g.pci_device_id)
                                    : "");
  models.erase("");
  if (models.size() < 2) return;
  std::string list;
  for (const auto& m : models) list += (list.empty() ? "" : ", ") + m;
  sink.add("mixed_gpu_models", "node", "GPU models: " + list, "topology",
           "GPUs of different models in one node: " + list);
}

}  // namespace

void gpu_findings(const Topology& t, FindingSink& sink) {
  for (const auto& g : t.gpus) {
    if (g.health) {
      memory(g, *g.health, sink);
      clocks_and_power(g, *g.health, sink);
    }
    nvlinks(t, g, sink);
    pcie(t, g, sink);
  }
  mixed_models(t, sink);
}

}  // namespace autotune::topology::detail
