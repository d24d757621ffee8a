#pragma once
// Where a Topology comes from: a recorded file (hwloc 2 XML, NCCL topology XML, or the probe's own JSON
// record, told apart by content) or the live node (optionally a recorded sysfs tree). Reading is stateless
// and thread-safe; bad files throw InputError naming the file and line. A live source that is missing is
// reported in Topology::sources as "not available: why", never as zero devices, and the probe succeeds with
// what it has.

#include <filesystem>
#include <memory>
#include <string_view>

#include "common/input_file.hpp"
#include "topology/model.hpp"
#include "topology/system_reader.hpp"

namespace autotune::topology {

// Reads an hwloc 2 XML (<topology> root), NCCL topology XML (<system> root) or a probe JSON record
// (`probe --format json`, health readings included). Throws InputError(file, line, ...) for a file that
// cannot be read, is malformed or truncated, or is not a topology.
// A recorded topology (hwloc or NCCL XML, a probe record) is a few MiB for the largest nodes.
inline constexpr InputKind kTopologyInput{"a topology", uint64_t{64} << 20};

Topology read_topology_file(const std::filesystem::path& path);

// Parses text already in memory; `file` only names it in errors and in Topology::origin.
Topology read_topology_text(std::string_view text, const std::string& file);

struct LiveOptions {
  std::filesystem::path sysfs_root = "/sys";
  // Empty: "/proc" for the real /sys, else the "proc" folder beside a recorded sysfs root.
  std::filesystem::path proc_root;
  // Health readings (topology/health_readings.hpp): off by default, because the launcher probes on every
  // job's start for the fingerprint alone; `probe` turns them on.
  bool health = false;
  // Between the two reads of each NVML error counter, so that rates can be judged (0: read once).
  int counter_interval_ms = 1000;
};

// The live node. With a sysfs_root other than /sys (a recorded tree), the libraries (hwloc, CUDA, NVML,
// verbs) are not asked: they would describe this machine, not the recorded one.
Topology probe_live(const LiveOptions& options = {});

// The probe itself, on any reader (tests pass recorded or fault-injecting ones). `options` says whether to
// read health and how; its paths are the reader's business.
Topology probe_system(const SystemReader& reader, const LiveOptions& options = {});

// The real reader behind probe_live. Throws InputError naming sysfs_root when it is not /sys and is not a
// recorded sysfs tree (no such folder, or no bus/ or class/ in it).
std::unique_ptr<SystemReader> make_system_reader(const LiveOptions& options);

}  // namespace autotune::topology
