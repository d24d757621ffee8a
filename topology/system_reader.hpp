#pragma once
// The seam between the live probe and the machine: every file the probe reads under /sys and /proc, and every
// library it asks (hwloc, the CUDA driver, NVML, libibverbs), goes through this interface. The real one reads
// the node (or a recorded sysfs tree under another root); tests substitute a recorded tree or a fake that
// injects faults. Each library answer says either what it found or, in `why`, why it could not ask.
// Implementations need not be thread-safe: one probe uses one reader.

#include <optional>
#include <string>
#include <vector>

#include "topology/health_readings.hpp"

namespace autotune::topology {

struct CudaDevice {
  int ordinal = 0;
  std::string pci_bus_id;  // normalized "0000:1b:00.0"
  std::string name;
  int sm = 0;
  std::optional<bool> multicast;  // CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, where the driver knows it
  std::optional<bool> dma_buf;    // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, likewise
};

struct NvmlLink {
  int link = 0;
  bool up = false;
  enum class Remote { gpu, nvswitch, cpu, unknown } remote = Remote::unknown;
  std::string remote_bus_id;
  NvLinkErrors errors;  // when health was asked for
};

struct NvmlGpu {
  std::string pci_bus_id;
  std::vector<NvmlLink> links;
  std::optional<GpuHealth> health;  // when health was asked for
};

// What to ask NVML: the topology only (the launcher's fast path), or health readings too, with each error
// counter read twice counter_interval_ms apart (0: once) so that rates can be judged.
struct NvmlRequest {
  bool health = false;
  int counter_interval_ms = 0;
};

struct VerbsPort {
  int port = 1;
  std::string state;       // ACTIVE, DOWN, INIT, ARMED
  std::string link_layer;  // InfiniBand, Ethernet
  double speed_gbps = 0;
};

struct VerbsDevice {
  std::string name;
  std::vector<VerbsPort> ports;
  // Whether the kernel registers dma-buf memory for this device (NCCL's test: ibv_reg_dmabuf_mr with fd -1
  // fails with EOPNOTSUPP/EPROTONOSUPPORT when it does not).
  std::optional<bool> dma_buf;
};

template <typename T>
struct LibraryAnswer {
  bool available = false;
  std::string why;  // when not available: the reason, in words ("libcuda.so.1 not found: ...")
  std::vector<T> items;
};

struct HwlocSummary {
  bool available = false;
  std::string why;
  int numa_nodes = 0;
  int pci_devices = 0;
  std::string cpu_arch;
  std::string cpu_vendor;
  int cpu_family = -1, cpu_model = -1;  // hwloc's CPUFamilyNumber and CPUModelNumber; -1 unknown
};

class SystemReader {
 public:
  virtual ~SystemReader() = default;
  // Paths are relative to the sysfs root ("bus/pci/devices/0000:1b:00.0/class") or to the proc root when
  // they start with "proc:" ("proc:modules"). nullopt / empty when absent or unreadable.
  virtual std::optional<std::string> read(const std::string& path) const = 0;
  virtual std::vector<std::string> list(const std::string& path) const = 0;
  // A symlink's target resolved and made relative to the sysfs root ("devices/pci0000:80/0000:80:02.2/...").
  virtual std::optional<std::string> resolve(const std::string& path) const = 0;
  // Whether the libraries below describe the machine the files came from (false for a recorded tree).
  virtual bool live() const = 0;
  virtual HwlocSummary hwloc() const = 0;
  virtual LibraryAnswer<CudaDevice> cuda() const = 0;
  virtual LibraryAnswer<NvmlGpu> nvml(const NvmlRequest& request) const = 0;
  virtual LibraryAnswer<VerbsDevice> verbs() const = 0;
  // Libraries exporting ncclCollNetPlugin_v* (and whether libsharp_coll is loadable), for CollNet evidence.
  virtual std::vector<std::string> collnet_plugins() const = 0;
};

}  // namespace autotune::topology
