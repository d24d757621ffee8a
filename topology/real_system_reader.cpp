// The real SystemReader: files under a sysfs root and a proc root; hwloc, the CUDA driver and NVML loaded
// with dlopen (so the library never links libcudart/libcuda and runs on nodes without a driver), libibverbs
// linked.

#include <hwloc.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/input_error.hpp"
#include "topology/dl_library.hpp"
#include "topology/nvml_reader.hpp"
#include "topology/pci_ids.hpp"
#include "topology/reader.hpp"

namespace autotune::topology {
namespace {

namespace fs = std::filesystem;

using detail::Library;

// The CUDA driver API prototypes used here (cuda.h), declared so that no CUDA header or library is needed.
using CUresult = int;
using CUdevice = int;
constexpr int kAttrPciBus = 33, kAttrPciDevice = 34, kAttrPciDomain = 50, kAttrCcMajor = 75,
              kAttrCcMinor = 76, kAttrDmaBuf = 124, kAttrMulticast = 132;

double lanes_of(int width) {
  switch (width) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
  }
  return 0;
}

double lane_gbps_of(int speed) {
  switch (speed) {
    case 1:
      return 2.5;
    case 2:
      return 5;
    case 4:
      return 10;
    case 8:
      return 10;
    case 16:
      return 14;
    case 32:
      return 25;
    case 64:
      return 50;
    case 128:
      return 100;
  }
  return 0;
}

// NCCL's own test of the kernel's dma-buf support for RDMA: registering fd -1 fails with EBADF where the
// kernel supports dma-buf and with EOPNOTSUPP / EPROTONOSUPPORT where it does not.
std::optional<bool> kernel_dma_buf(ibv_context* ctx) {
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (!pd) return std::nullopt;
  errno = 0;
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
  const int e = errno;
  if (mr) ibv_dereg_mr(mr);
  ibv_dealloc_pd(pd);
  return !(e == EOPNOTSUPP || e == EPROTONOSUPPORT);
}

class RealSystemReader : public SystemReader {
 public:
  RealSystemReader(fs::path sys, fs::path proc, bool live)
      : sys_(std::move(sys)), proc_(std::move(proc)), live_(live) {}

  std::optional<std::string> read(const std::string& path) const override {
    std::ifstream in(full(path));
    if (!in) return std::nullopt;
    std::stringstream s;
    s << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return s.str();
  }

  std::vector<std::string> list(const std::string& path) const override {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(full(path), ec), end; !ec && it != end; it.increment(ec))
      out.push_back(it->path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::optional<std::string> resolve(const std::string& path) const override {
    std::error_code ec;
    const fs::path target = fs::canonical(full(path), ec);
    if (ec) return std::nullopt;
    const fs::path root = fs::canonical(sys_, ec);
    if (ec) return std::nullopt;
    const fs::path rel = target.lexically_relative(root);
    if (rel.empty() || *rel.begin() == "..") return std::nullopt;
    return rel.string();
  }

  bool live() const override { return live_; }

  HwlocSummary hwloc() const override {
    HwlocSummary s;
    hwloc_topology_t topo = nullptr;
    if (hwloc_topology_init(&topo) != 0) {
      s.why = "hwloc_topology_init failed";
      return s;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    // On Linux hwloc's own component reads PCI from sysfs; the libpciaccess one ("pci") finds nothing more
    // and leaves about 1 KiB behind in every process (seen by LeakSanitizer once hwloc unloads it). GPUs
    // come from CUDA and NVML here, so the OpenCL and GL components would only add start-up time.
    for (const char* component : {"pci", "opencl", "gl"})
      hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);
    if (hwloc_topology_load(topo) != 0) {
      s.why = std::string("hwloc_topology_load: ") + std::strerror(errno);
      hwloc_topology_destroy(topo);
      return s;
    }
    s.available = true;
    s.numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    for (hwloc_obj_t p = hwloc_get_next_pcidev(topo, nullptr); p; p = hwloc_get_next_pcidev(topo, p))
      ++s.pci_devices;
    if (hwloc_obj_t root = hwloc_get_root_obj(topo)) {
      if (const char* a = hwloc_obj_get_info_by_name(root, "Architecture")) s.cpu_arch = a;
    }
    if (hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0)) {
      if (const char* v = hwloc_obj_get_info_by_name(pkg, "CPUVendor")) s.cpu_vendor = v;
      if (const char* v = hwloc_obj_get_info_by_name(pkg, "CPUFamilyNumber")) s.cpu_family = std::atoi(v);
      if (const char* v = hwloc_obj_get_info_by_name(pkg, "CPUModelNumber")) s.cpu_model = std::atoi(v);
    }
    hwloc_topology_destroy(topo);
    return s;
  }

  LibraryAnswer<CudaDevice> cuda() const override {
    LibraryAnswer<CudaDevice> a;
    Library lib("libcuda.so.1");
    if (!lib) {
      a.why = "libcuda.so.1 (the CUDA driver) not found: " + lib.error();
      return a;
    }
    auto cuInit = lib.get<CUresult (*)(unsigned)>("cuInit");
    auto cuGetErrorString = lib.get<CUresult (*)(CUresult, const char**)>("cuGetErrorString");
    auto cuDeviceGetCount = lib.get<CUresult (*)(int*)>("cuDeviceGetCount");
    auto cuDeviceGet = lib.get<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
    auto cuDeviceGetName = lib.get<CUresult (*)(char*, int, CUdevice)>("cuDeviceGetName");
    auto cuDeviceGetAttribute = lib.get<CUresult (*)(int*, int, CUdevice)>("cuDeviceGetAttribute");
    if (!cuInit || !cuDeviceGetCount || !cuDeviceGet || !cuDeviceGetName || !cuDeviceGetAttribute) {
      a.why = "libcuda.so.1 lacks the driver API entry points (a stub library?)";
      return a;
    }
    auto err = [&](const char* call, CUresult r) {
      const char* text = nullptr;
      if (cuGetErrorString) cuGetErrorString(r, &text);
      return std::string(call) + ": " + (text ? text : "error " + std::to_string(r));
    };
    if (CUresult r = cuInit(0); r != 0) {
      a.why = err("cuInit", r);
      return a;
    }
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count); r != 0) {
      a.why = err("cuDeviceGetCount", r);
      return a;
    }
    a.available = true;
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      if (cuDeviceGet(&dev, i) != 0) continue;
      CudaDevice d;
      d.ordinal = i;
      char name[256] = {};
      if (cuDeviceGetName(name, sizeof name, dev) == 0) d.name = name;
      int domain = 0, bus = 0, device = 0, major = 0, minor = 0, multicast = 0;
      cuDeviceGetAttribute(&domain, kAttrPciDomain, dev);
      cuDeviceGetAttribute(&bus, kAttrPciBus, dev);
      cuDeviceGetAttribute(&device, kAttrPciDevice, dev);
      cuDeviceGetAttribute(&major, kAttrCcMajor, dev);
      cuDeviceGetAttribute(&minor, kAttrCcMinor, dev);
      char id[32];
      std::snprintf(id, sizeof id, "%04x:%02x:%02x.0", domain, bus, device);
      d.pci_bus_id = id;
      d.sm = major * 10 + minor;
      if (cuDeviceGetAttribute(&multicast, kAttrMulticast, dev) == 0) d.multicast = multicast != 0;
      int dma_buf = 0;
      if (cuDeviceGetAttribute(&dma_buf, kAttrDmaBuf, dev) == 0) d.dma_buf = dma_buf != 0;
      a.items.push_back(d);
    }
    return a;
  }

  LibraryAnswer<NvmlGpu> nvml(const NvmlRequest& request) const override {
    return detail::read_nvml(request);
  }

  LibraryAnswer<VerbsDevice> verbs() const override {
    LibraryAnswer<VerbsDevice> a;
    int n = 0;
    errno = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list) {
      const int e = errno;
      a.why = std::string("no RDMA stack (ibv_get_device_list: ") + (e ? std::strerror(e) : "failed") + ")";
      return a;
    }
    a.available = true;
    for (int i = 0; i < n; ++i) {
      VerbsDevice d;
      d.name = ibv_get_device_name(list[i]);
      if (ibv_context* ctx = ibv_open_device(list[i])) {
        ibv_device_attr attr{};
        if (ibv_query_device(ctx, &attr) == 0) {
          for (int p = 1; p <= attr.phys_port_cnt; ++p) {
            ibv_port_attr pa{};
            if (ibv_query_port(ctx, static_cast<uint8_t>(p), &pa) != 0) continue;
            VerbsPort port;
            port.port = p;
            port.state = ibv_port_state_str(pa.state);
            if (port.state.rfind("PORT_", 0) == 0) port.state = port.state.substr(5);
            port.link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
            port.speed_gbps = lanes_of(pa.active_width) * lane_gbps_of(pa.active_speed);
            d.ports.push_back(port);
          }
        }
        d.dma_buf = kernel_dma_buf(ctx);
        ibv_close_device(ctx);
      }
      a.items.push_back(std::move(d));
    }
    ibv_free_device_list(list);
    return a;
  }

  std::vector<std::string> collnet_plugins() const override {
    // NCCL loads NCCL_NET_PLUGIN's library or libnccl-net.so; the SHARP plugin is libnccl-net.so from
    // nccl-rdma-sharp-plugins. A plugin counts only if it exports a CollNet table.
    std::vector<std::string> names;
    if (const char* env = std::getenv("NCCL_NET_PLUGIN"); env && *env) {
      names.push_back(env);
      names.push_back(std::string("libnccl-net-") + env + ".so");
    }
    names.push_back("libnccl-net.so");
    std::vector<std::string> found;
    for (const auto& name : names) {
      void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
      if (!h) continue;
      for (const char* sym : {"ncclCollNetPlugin_v10", "ncclCollNetPlugin_v9", "ncclCollNetPlugin_v8",
                              "ncclCollNetPlugin_v7", "ncclCollNetPlugin_v6", "ncclCollNetPlugin_v5"})
        if (dlsym(h, sym)) {
          found.push_back(name + " (" + sym + ")");
          break;
        }
      dlclose(h);
    }
    return found;
  }

 private:
  fs::path full(const std::string& path) const {
    if (path.rfind("proc:", 0) == 0) return proc_ / path.substr(5);
    return sys_ / path;
  }

  fs::path sys_;
  fs::path proc_;
  bool live_;
};

}  // namespace

std::unique_ptr<SystemReader> make_system_reader(const LiveOptions& options) {
  std::error_code ec;
  const bool live = fs::equivalent(options.sysfs_root, "/sys", ec) || options.sysfs_root == "/sys";
  fs::path sys = options.sysfs_root;
  // A recorded tree may be given by its top folder (holding sys/ and proc/) or by its sys/ folder.
  if (!live && fs::is_directory(sys / "sys" / "bus", ec)) sys = sys / "sys";
  // A recorded tree that is not there would read as a node without devices: refuse it before probing.
  if (!live && !fs::is_directory(sys / "bus", ec) && !fs::is_directory(sys / "class", ec))
    throw InputError(
        options.sysfs_root.string(), 0,
        std::string("expected a recorded sysfs tree (a folder holding bus/ and class/, or one holding "
                    "sys/ and proc/), found ") +
            (fs::exists(options.sysfs_root, ec) ? "a folder without bus/ or class/" : "no such folder"));
  fs::path proc = options.proc_root;
  if (proc.empty()) proc = live ? fs::path("/proc") : sys.parent_path() / "proc";
  return std::make_unique<RealSystemReader>(sys, proc, live);
}

Topology probe_live(const LiveOptions& options) {
  return probe_system(*make_system_reader(options), options);
}

}  // namespace autotune::topology
