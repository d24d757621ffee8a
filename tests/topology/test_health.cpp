// Health findings on recorded nodes: one fixture per finding kind (tests/topology/fixtures/health, each the
// healthy record with one reading changed, see make_fixtures.py), the healthy record, and the table that
// docs/health.md must reproduce.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "test_helpers.hpp"
#include "topology/analysis.hpp"
#include "topology/health.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;

namespace {

std::vector<HealthFinding> findings_of(const std::string& name) {
  return analyze(read_topology_file(test::own_fixture("health/" + name + ".json"))).health;
}

// The fixture for `kind` reports exactly one finding, of that kind, on that device, with that reading.
void check_fixture(const std::string& kind, const std::string& device, const std::string& reading) {
  const auto findings = findings_of(kind);
  REQUIRE(findings.size() == 1);
  const HealthFinding& f = findings[0];
  CHECK(f.kind == kind);
  REQUIRE(find_kind(kind));
  CHECK(f.severity == find_kind(kind)->severity);
  CHECK(f.device == device);
  CHECK(f.reading == reading);
  CHECK(f.source.find(kind + ".json") != std::string::npos);  // where the reading came from
  if (device != "node") CHECK(f.message.find(device.substr(0, device.find(' '))) != std::string::npos);
  CHECK(may_calibrate(findings) == (f.severity == Severity::warn));
}

}  // namespace

TEST_CASE("health: the healthy record has no findings, may calibrate, names its fabric settings",
          "[health]") {
  const Topology t = read_topology_file(test::own_fixture("health/healthy.json"));
  CHECK(t.from_live_node);
  const Analysis a = analyze(t);
  CHECK(a.health.empty());
  CHECK(may_calibrate(a.health));
  CHECK(node_status(a.health) == "ok");
  CHECK(a.fabric.env() ==
        std::map<std::string, std::string>{{"NCCL_IB_GID_INDEX", "3"}, {"NCCL_SOCKET_IFNAME", "=eth0"}});
  CHECK(a.gdr.status == FeatureStatus::available);
}

TEST_CASE("health: GPU memory fixtures (ECC, retired pages, row remapping)", "[health]") {
  check_fixture("ecc_uncorrected", "GPU1", "volatile uncorrected ECC errors: 2");
  check_fixture("retired_pages_limit", "GPU0", "retired pages: 65");
  check_fixture("retired_pages_pending", "GPU0", "page retirement pending");
  check_fixture("row_remap_failed", "GPU1", "row remapping failed");
  check_fixture("row_remap_pending", "GPU0", "row remapping pending");
}

TEST_CASE("health: GPU clock, thermal and power fixtures", "[health]") {
  check_fixture("clock_throttled", "GPU1", "clock-event reasons: HW slowdown, HW thermal slowdown");
  check_fixture("clock_power_capped", "GPU0", "clock-event reasons: SW power cap");
  check_fixture("sm_clock_low", "GPU1", "SM clock 1095 of 1980 MHz");
  check_fixture("temperature_high", "GPU0", "temperature 89 C, slowdown at 87 C");
  check_fixture("power_limit_reduced", "GPU1", "power limit 450 W, default 700 W");
  check_fixture("persistence_mode_off", "GPU0", "persistence mode disabled");
  check_fixture("mixed_gpu_models", "node", "GPU models: NVIDIA H100 80GB HBM3, NVIDIA H100 PCIe");
}

TEST_CASE("health: NVLink fixtures (down, errors growing now, error history)", "[health]") {
  check_fixture("nvlink_down", "NVLink 2 of GPU0", "link state: inactive");
  check_fixture("nvlink_errors", "NVLink 1 of GPU1", "replay +3 in 1000 ms");
  check_fixture("nvlink_error_history", "NVLink 3 of GPU0", "replay errors 0, recovery errors 4");
}

TEST_CASE("health: PCIe fixtures (width, generation, replays per minute, ACS)", "[health]") {
  check_fixture("pcie_width_degraded", "GPU1 (0000:05:00.0)", "PCIe x8 of x16");
  check_fixture("pcie_gen_degraded", "GPU0 (0000:02:00.0)", "PCIe gen 3 of 5");
  check_fixture("pcie_replay_rate", "GPU0 (0000:02:00.0)", "PCIe replays: 120 per minute");
  check_fixture("pcie_acs_redirect", "PCIe port 0000:04:00.0",
                "ACSCtl: SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+");
}

TEST_CASE("health: NIC fixtures (not active, rate, port counters)", "[health]") {
  check_fixture("nic_not_active", "mlx5_1", "port 1 DOWN");
  check_fixture("nic_port_not_active", "mlx5_0 port 2", "state DOWN");
  check_fixture("nic_rate_degraded", "mlx5_1 port 1", "200 Gb/s, other ConnectX-7 ports 400 Gb/s");
  check_fixture("nic_rate_below_max", "ConnectX-7 (mlx5_0, mlx5_1)",
                "fastest port 200 Gb/s, ConnectX-7 runs up to 400 Gb/s");
  check_fixture("ib_link_errors", "mlx5_0 port 1",
                "symbol_error 1234 (>= 10), link_error_recovery 12 (>= 10)");
  check_fixture("ib_receive_errors", "mlx5_1 port 1", "port_rcv_errors 57 (>= 10)");
}

TEST_CASE("health: RoCE GID fixtures (v1 only, IPv6 only, link-local only, index differs)", "[health]") {
  check_fixture("roce_gid_v1_only", "mlx5_1 port 1", "routable GIDs are RoCE v1 only");
  check_fixture("roce_gid_ipv6_only", "mlx5_0 port 1", "RoCE v2 GIDs are IPv6 only");
  check_fixture("roce_gid_link_local_only", "mlx5_1 port 1", "only link-local (fe80::) GIDs");
  check_fixture("roce_gid_index_differs", "node",
                "RoCE v2 IPv4 GID index mlx5_0 port 1: 3; mlx5_1 port 1: 5");
  // A port without a usable GID leaves NCCL_IB_GID_INDEX unset rather than naming an index that fails there.
  const Topology t = read_topology_file(test::own_fixture("health/roce_gid_index_differs.json"));
  CHECK_FALSE(analyze(t).fabric.gid_index);
}

TEST_CASE("health: socket, GPUDirect RDMA and DCGM fixtures", "[health]") {
  check_fixture("socket_interface_missing", "node",
                "no interface is up with an address other than the loopback and container or VM bridges");
  check_fixture("socket_interface_bridge", "cni0", "NCCL's automatic choice: cni0");
  check_fixture("gdr_unavailable", "node", "no peer-memory module; dma-buf: CUDA yes, kernel RDMA no");
  check_fixture("dcgm_diag_fail", "GPU1",
                "Hardware: Memory: fail (1 faulty memory elements detected on GPU 1)");
  check_fixture("dcgm_diag_warn", "GPU0",
                "Deployment: Inforom: warn (A corrupt InfoROM has been detected in GPU 0.)");
}

TEST_CASE("health: every finding kind has a fixture and a row in docs/health.md", "[health]") {
  std::ifstream doc(std::filesystem::path(AUTOTUNE_SOURCE_DIR) / "docs/health.md");
  REQUIRE(doc);
  std::stringstream text;
  text << doc.rdbuf();
  std::set<std::string> kinds;
  for (const auto& k : finding_kinds()) {
    INFO(k.kind);
    CHECK(kinds.insert(std::string(k.kind)).second);
    CHECK(std::filesystem::exists(test::own_fixture("health/" + std::string(k.kind) + ".json")));
    // The row: | `kind` | severity | threshold | source |
    const std::string row = "| `" + std::string(k.kind) + "` | " + std::string(severity_name(k.severity)) +
                            " | " + std::string(k.threshold) + " | " + std::string(k.source) + " |";
    CHECK(text.str().find(row) != std::string::npos);
  }
  // And no fixture for a kind that does not exist.
  for (const auto& e : std::filesystem::directory_iterator(test::own_fixture("health")))
    if (e.path().extension() == ".json" && e.path().stem() != "healthy")
      CHECK(kinds.count(e.path().stem().string()));
}
