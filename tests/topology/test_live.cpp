#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "support/temp_dir.hpp"
#include "test_helpers.hpp"
#include "topology/analysis.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;
namespace fs = std::filesystem;

using autotune::test::TempDir;

namespace {

const SourceStatus* source(const Topology& t, const std::string& name) {
  for (const auto& s : t.sources)
    if (s.name == name) return &s;
  return nullptr;
}

// A SystemReader over a recorded tree whose libraries answer as a test says: a live node seen through fakes.
class FakeLiveReader : public SystemReader {
 public:
  explicit FakeLiveReader(const fs::path& root)
      : files_(make_system_reader({root, root.parent_path() / "proc"})) {}
  std::optional<std::string> read(const std::string& p) const override {
    if (fail_reads) return std::nullopt;
    return files_->read(p);
  }
  std::vector<std::string> list(const std::string& p) const override {
    if (fail_reads) return {};
    return files_->list(p);
  }
  std::optional<std::string> resolve(const std::string& p) const override { return files_->resolve(p); }
  bool live() const override { return true; }
  HwlocSummary hwloc() const override {
    return {false, "hwloc_topology_load: injected failure", 0, 0, "", ""};
  }
  LibraryAnswer<CudaDevice> cuda() const override { return cuda_answer; }
  LibraryAnswer<NvmlGpu> nvml(const NvmlRequest& request) const override {
    asked = request;
    return nvml_answer;
  }
  LibraryAnswer<VerbsDevice> verbs() const override { return verbs_answer; }
  std::vector<std::string> collnet_plugins() const override { return plugins; }

  bool fail_reads = false;
  LibraryAnswer<CudaDevice> cuda_answer{
      false, "cuInit: CUDA driver version is insufficient for CUDA runtime version", {}};
  LibraryAnswer<NvmlGpu> nvml_answer{false, "libnvidia-ml.so.1 not found", {}};
  LibraryAnswer<VerbsDevice> verbs_answer{
      false, "no RDMA stack (ibv_get_device_list: Function not implemented)", {}};
  std::vector<std::string> plugins;
  mutable std::optional<NvmlRequest> asked;

 private:
  std::unique_ptr<SystemReader> files_;
};

}  // namespace

TEST_CASE("sysfs tree: own fixture", "[live][sysfs]") {
  LiveOptions o;
  o.sysfs_root = test::own_fixture("sysfs-small/sys");
  const Topology t = probe_live(o);
  CHECK(t.origin == "recorded sysfs tree");
  REQUIRE(t.gpus.size() == 1);
  CHECK(t.gpus[0].pci_bus_id == "0000:02:00.0");
  CHECK(t.gpus[0].sm == 90);
  CHECK(t.gpus[0].link.width == 16);
  CHECK(t.gpus[0].link.speed_gts == 16.0);
  CHECK(t.gpus[0].link_max.speed_gts == 32.0);
  CHECK(t.numa_nodes == 1);
  REQUIRE(t.nics.size() == 1);
  const Nic& n = t.nics[0];
  CHECK(n.name == "mlx5_0");
  CHECK(n.pci_bus_id == "0000:03:00.0");
  CHECK(n.model == "ConnectX-7");
  REQUIRE(n.ports.size() == 2);
  CHECK(n.ports[0].state == "ACTIVE");
  CHECK(n.ports[0].speed_gbps == 400.0);
  CHECK(n.ports[1].state == "DOWN");
  const Analysis a = analyze(t);
  CHECK(a.paths.at(0).type == PathType::pix);
  std::vector<std::string> kinds;
  for (const auto& h : a.health) kinds.push_back(h.kind);
  CHECK(kinds == std::vector<std::string>{"pcie_gen_degraded", "nic_port_not_active"});
  // The libraries were not asked about a recorded tree, and the reason is recorded.
  REQUIRE(source(t, "cuda"));
  CHECK_FALSE(source(t, "cuda")->available);
  CHECK(source(t, "cuda")->detail.find("recorded tree") != std::string::npos);
}

TEST_CASE("sysfs tree given by its top folder finds sys/ and proc/", "[live][sysfs]") {
  LiveOptions o;
  o.sysfs_root = test::own_fixture("sysfs-small");
  const Topology t = probe_live(o);
  CHECK(t.gpus.size() == 1);
  CHECK(t.loaded_modules == std::vector<std::string>{"nvidia_peermem", "nvidia"});
}

TEST_CASE("fake live node: libraries missing are reported with their reasons", "[live][fake]") {
  FakeLiveReader r(test::own_fixture("sysfs-small/sys"));
  const Topology t = probe_system(r);
  CHECK(t.origin == "live");
  CHECK(t.gpus.size() == 1);  // sysfs still sees it
  CHECK(source(t, "cuda")->detail == "cuInit: CUDA driver version is insufficient for CUDA runtime version");
  CHECK(source(t, "ibverbs")->detail == "no RDMA stack (ibv_get_device_list: Function not implemented)");
  CHECK_FALSE(source(t, "hwloc")->available);
  const Analysis a = analyze(t);
  CHECK(a.gdr.status == FeatureStatus::available);  // nvidia_peermem in the fake proc/modules
  CHECK(a.collnet.status == FeatureStatus::not_available);
  CHECK(a.nvls.status == FeatureStatus::not_available);  // no NVSwitch
}

TEST_CASE("fake live node: CUDA, NVML and verbs answers refine the model", "[live][fake]") {
  FakeLiveReader r(test::own_fixture("sysfs-small/sys"));
  r.cuda_answer = {true, "", {{3, "0000:02:00.0", "NVIDIA H200", 90, true, std::nullopt}}};
  NvmlGpu g{"0000:02:00.0", {}, std::nullopt};
  for (int l = 0; l < 18; ++l) g.links.push_back({l, l != 5, NvmlLink::Remote::nvswitch, "0000:c5:00.0", {}});
  r.nvml_answer = {true, "", {g}};
  r.verbs_answer = {true, "", {{"mlx5_0", {{1, "ACTIVE", "InfiniBand", 200.0}}, std::nullopt}}};
  r.plugins = {"libnccl-net.so (ncclCollNetPlugin_v9)"};
  const Topology t = probe_system(r);
  REQUIRE(t.gpus.size() == 1);
  CHECK(t.gpus[0].index == 3);
  CHECK(t.gpus[0].name == "NVIDIA H200");
  CHECK(t.gpus[0].nvlink_links() == 18);
  CHECK(t.nvswitch_seen);
  CHECK(t.cuda_multicast == std::optional<bool>(true));
  REQUIRE(t.nics[0].ports.size() == 1);
  CHECK(t.nics[0].ports[0].speed_gbps == 200.0);
  const Analysis a = analyze(t);
  CHECK(a.nvls.status == FeatureStatus::available);
  CHECK(a.collnet.status == FeatureStatus::unknown);
  CHECK(a.collnet.evidence.find("libnccl-net.so") != std::string::npos);
  // NVLink 5 down, PCIe below its maximum speed, the ConnectX-7 port at 200 of its 400 Gb/s.
  REQUIRE(a.health.size() == 3);
  CHECK(a.health[0].message == "NVLink 5 of GPU3 is down");
  CHECK(a.health[0].source == "nvml");
  CHECK(a.health[2].kind == "nic_rate_below_max");
}

TEST_CASE("fake live node: unreadable sysfs is reported, the probe still succeeds", "[live][fake]") {
  FakeLiveReader r(test::own_fixture("sysfs-small/sys"));
  r.fail_reads = true;
  const Topology t = probe_system(r);
  CHECK(t.gpus.empty());
  CHECK_FALSE(source(t, "sysfs")->available);
  CHECK_FALSE(source(t, "sysfs-infiniband")->available);
  CHECK_FALSE(source(t, "modules")->available);
}

TEST_CASE("recorded: hwloc's sysfs tree of a 2-socket node with an FDR HCA", "[live][recorded]") {
  AUTOTUNE_SHARED_OR_SKIP(tarball, "sysfs/sysfs-hwloc-32em64t-2n8c+1mic.tar.bz2");
  const TempDir tmp("sysfs");
  const std::filesystem::path dir = tmp.path();
  const std::string cmd = "tar -xjf '" + tarball.string() + "' -C '" + dir.string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  LiveOptions o;
  o.sysfs_root = dir / "32em64t-2n8c+1mic";
  const Topology t = probe_live(o);
  fs::remove_all(dir);
  CHECK(t.numa_nodes == 2);
  REQUIRE(t.nics.size() == 1);  // scif0 is not on PCI
  const Nic& n = t.nics[0];
  CHECK(n.name == "mlx4_0");
  CHECK(n.pci_bus_id == "0000:82:00.0");
  CHECK(n.numa_node == 1);
  REQUIRE(n.ports.size() == 1);
  CHECK(n.ports[0].state == "ACTIVE");
  CHECK(n.ports[0].link_layer == "InfiniBand");
  CHECK(n.ports[0].speed_gbps == 56.0);
  CHECK(source(t, "sysfs-infiniband")->detail.find("scif0") != std::string::npos);
}

TEST_CASE("live probe on this machine succeeds and says why what is missing is missing", "[live]") {
  const Topology t = probe_live();
  CHECK(t.origin == "live");
  for (const char* name : {"sysfs", "hwloc", "cuda", "nvml", "ibverbs", "sysfs-infiniband"}) {
    const SourceStatus* s = source(t, name);
    REQUIRE(s);
    CHECK_FALSE(s->detail.empty());  // either what was read or why not
  }
}

TEST_CASE("health: NVML readings through the reader seam become findings, the launcher's probe reads none",
          "[live][fake][health]") {
  FakeLiveReader r(test::own_fixture("sysfs-small/sys"));
  NvmlGpu g{"0000:02:00.0", {}, GpuHealth{}};
  g.health->ecc_volatile_uncorrected = 1;
  g.health->pcie_width = 16;
  g.health->pcie_width_max = 16;
  g.health->pcie_gen = 5;
  g.health->pcie_gen_max = 5;
  g.health->clock_event_reasons = clock_event::gpu_idle;
  NvLinkErrors errors;
  errors.crc = Counter{900, 250};  // 250 in half a second: 500 per second
  g.links.push_back({0, true, NvmlLink::Remote::nvswitch, "0000:c5:00.0", errors});
  r.nvml_answer = {true, "", {g}};
  LiveOptions o;
  o.health = true;
  o.counter_interval_ms = 500;
  const Topology t = probe_system(r, o);
  REQUIRE(r.asked);
  CHECK(r.asked->health);
  CHECK(r.asked->counter_interval_ms == 500);
  CHECK(t.health.counter_interval_ms == 500);
  std::vector<std::string> kinds;
  for (const auto& f : analyze(t).health) kinds.push_back(f.kind);
  // The sysfs link at 16 of 32 GT/s is not a finding: NVML says gen 5 of 5, and the GPU is idle anyway.
  CHECK(kinds == std::vector<std::string>{"ecc_uncorrected", "nvlink_errors", "nic_port_not_active"});
  CHECK(analyze(t).health[1].reading == "CRC 500/s in 500 ms");

  // The launcher's probe (health off) asks NVML for the topology only and reads no sysfs health.
  const Topology fast = probe_system(r);
  CHECK_FALSE(r.asked->health);
  CHECK_FALSE(fast.health.read);
  CHECK(fast.sources.back().name != "health");
}
