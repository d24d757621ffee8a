#include <algorithm>
#include <catch2/catch.hpp>

#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"

using namespace autotune::topology;

namespace {
bool has(const std::vector<std::string>& facts, const std::string& fact) {
  return std::find(facts.begin(), facts.end(), fact) != facts.end();
}
}  // namespace

TEST_CASE("fingerprint: 16 hex digits, stable across bus ids and names", "[fingerprint]") {
  const Topology a = load_example("h100-8x");
  const std::string fp = fingerprint(a, 228);
  REQUIRE(fp.size() == 16);
  CHECK(fp.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(fingerprint(a, 228) == fp);

  Topology b = a;  // another node of the same kind: other bus ids, GUIDs, device names, order
  for (auto& g : b.gpus) {
    g.pci_bus_id[5] = 'f';
    for (auto& p : g.pci_path) p.bus_id += "x";
  }
  for (auto& n : b.nics) {
    n.pci_bus_id[5] = 'f';
    n.name = "ib" + n.name;
    for (auto& p : n.ports) p.guid = "0xdead";
    for (auto& p : n.pci_path) p.bus_id += "x";
  }
  b.origin = "another-host";
  std::reverse(b.nics.begin(), b.nics.end());
  CHECK(fingerprint(b, 228) == fp);
}

TEST_CASE("fingerprint: NIC speed, GPU count, NCCL version and kind change it", "[fingerprint]") {
  const Topology a = load_example("h100-8x");
  const std::string fp = fingerprint(a, 228);
  Topology slower = a;  // another fabric: every NIC at HDR
  for (auto& n : slower.nics)
    for (auto& p : n.ports) p.speed_gbps = 200;
  CHECK(fingerprint(slower, 228) != fp);
  Topology ethernet = a;
  ethernet.nics[0].ports[0].link_layer = "Ethernet";
  CHECK(fingerprint(ethernet, 228) != fp);
  Topology fewer = a;
  fewer.gpus.pop_back();
  CHECK(fingerprint(fewer, 228) != fp);
  CHECK(fingerprint(a, 227) != fp);
  CHECK(fingerprint(load_example("h100-8x-2nic"), 228) != fp);
  CHECK(has(fingerprint_facts(a, 228), "gpu 8x NVIDIA H100 80GB HBM3 sm90 nvlink switchx18"));
}

// Issue 14: ranks of one job resolve their profile by fingerprint, so a sick node must stay the same kind of
// node as its healthy peers (its sickness is a health finding), or it would run other rules than they do.
TEST_CASE("fingerprint: health state never changes it", "[fingerprint][health]") {
  const Topology a = load_example("h100-8x");
  const std::string fp = fingerprint(a, 228);
  Topology sick = a;
  sick.nics[3].ports[0].state = "DOWN";
  sick.nics[5].ports[0].speed_gbps = 200;  // one port trained at half its rate
  sick.gpus[2].nvlinks[7].up = false;
  sick.gpus[4].link.width = 4;  // PCIe trained at x4
  sick.gpus[4].link.speed_gts = 2.5;
  CHECK(fingerprint(sick, 228) == fp);
  CHECK(has(fingerprint_facts(sick, 228), "nic 8x ConnectX-7 InfiniBand 400Gb/s"));
}

TEST_CASE("fingerprint: a mismatch says what differs, by kind of fact", "[fingerprint]") {
  const Topology a = load_example("h100-8x");
  CHECK(fingerprint_differences(fingerprint_facts(a, 228), fingerprint_facts(a, 228)).empty());
  Topology b = a;
  for (auto& n : b.nics)
    for (auto& p : n.ports) p.speed_gbps = 200;
  b.gpus.pop_back();
  const auto diff = fingerprint_differences(fingerprint_facts(a, 228), fingerprint_facts(b, 227));
  REQUIRE(diff.size() >= 3);
  CHECK(diff[0] == "NCCL version: calibrated 2.28, this node 2.27");
  CHECK(std::find(diff.begin(), diff.end(),
                  "GPUs: calibrated 8x NVIDIA H100 80GB HBM3 sm90 nvlink switchx18, this node 7x NVIDIA H100 "
                  "80GB HBM3 sm90 nvlink switchx18") != diff.end());
  CHECK(std::find(diff.begin(), diff.end(),
                  "NICs: calibrated 8x ConnectX-7 InfiniBand 400Gb/s, this node 8x ConnectX-7 InfiniBand "
                  "200Gb/s") != diff.end());
  // A fact only one side has reads as "none" on the other.
  CHECK(fingerprint_differences({"nccl 2.28", "nvswitch yes"}, {"nccl 2.28"}) ==
        std::vector<std::string>{"NVSwitch: calibrated yes, this node none"});
}
