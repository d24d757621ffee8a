// The probe's JSON as a record: written by to_json, read back by read_topology_file, the same node again
// (fingerprint, analysis, findings, every reading); bad records refused with the file, line and field.

#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "test_helpers.hpp"
#include "topology/analysis.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/output.hpp"
#include "topology/reader.hpp"

using namespace autotune::topology;

namespace {

std::string record_of(const Topology& t) {
  const Analysis a = analyze(t);
  return to_json({t, a, fingerprint(t, 228)});
}

std::string error_of(const std::string& text) {
  try {
    read_topology_text(text, "r.json");
  } catch (const autotune::InputError& e) {
    return e.what();
  }
  return "";
}

void same_node(const Topology& t, const Topology& back) {
  CHECK(fingerprint(back, 228) == fingerprint(t, 228));
  REQUIRE(back.gpus.size() == t.gpus.size());
  REQUIRE(back.nics.size() == t.nics.size());
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    CHECK(back.gpus[i].health == t.gpus[i].health);
    CHECK(back.gpus[i].pci_path.size() == t.gpus[i].pci_path.size());
    CHECK(back.gpus[i].link_max.width == t.gpus[i].link_max.width);
    REQUIRE(back.gpus[i].nvlinks.size() == t.gpus[i].nvlinks.size());
    for (size_t l = 0; l < t.gpus[i].nvlinks.size(); ++l)
      CHECK(back.gpus[i].nvlinks[l].errors == t.gpus[i].nvlinks[l].errors);
  }
  for (size_t i = 0; i < t.nics.size(); ++i) {
    CHECK(back.nics[i].model == t.nics[i].model);
    REQUIRE(back.nics[i].ports.size() == t.nics[i].ports.size());
    for (size_t p = 0; p < t.nics[i].ports.size(); ++p)
      CHECK(back.nics[i].ports[p].health == t.nics[i].ports[p].health);
  }
  CHECK(back.health == t.health);
  const Analysis a = analyze(t), b = analyze(back);
  REQUIRE(a.paths.size() == b.paths.size());
  for (size_t i = 0; i < a.paths.size(); ++i) CHECK(a.paths[i].type == b.paths[i].type);
  REQUIRE(a.health.size() == b.health.size());
  for (size_t i = 0; i < a.health.size(); ++i) CHECK(a.health[i].message == b.health[i].message);
  CHECK(a.fabric.env() == b.fabric.env());
  CHECK(a.nvls.status == b.nvls.status);
  CHECK(a.gdr.status == b.gdr.status);
}

}  // namespace

TEST_CASE("health: a probe record reads back as the same node, readings included", "[health][probe-json]") {
  LiveOptions o;
  o.sysfs_root = test::own_fixture("sysfs-roce");
  o.health = true;
  Topology t = probe_live(o);
  t.nics[0].ports[0].health.counters["symbol_error"] = 17;
  t.health.pci_bridges[2].acs_control = 0x1d;
  const Topology back = read_topology_text(record_of(t), "r.json");
  same_node(t, back);
  CHECK(back.origin == "r.json");
  CHECK(back.sources.front().detail.rfind("probe record of recorded sysfs tree", 0) == 0);
  // A recorded unhealthy node is as good as the live one: its findings come back.
  CHECK(analyze(back).health.size() == 2);
}

TEST_CASE("health: records of the bundled examples and of an unhealthy fixture round-trip",
          "[health][probe-json]") {
  for (const std::string name : {"h100-8x", "a100-pcie-8x", "h100-8x-2nic"}) {
    INFO(name);
    const Topology t = load_example(name);
    same_node(t, read_topology_text(record_of(t), "r.json"));
  }
  const Topology sick = read_topology_file(test::own_fixture("health/nvlink_errors.json"));
  same_node(sick, read_topology_text(record_of(sick), "r.json"));
}

TEST_CASE("health: bad probe records name the file, the line and the field", "[health][probe-json][errors]") {
  CHECK(error_of("{\n  \"schema\": 1,\n  \"gpus\": [\n").rfind("r.json:4: malformed JSON", 0) == 0);
  CHECK(error_of("{\"runner\": \"simulator\"}") ==
        "r.json:1: expected a probe record (nccl-autotune probe --format json): an object with schema, gpus "
        "and "
        "nics in , found \"{...}\"");
  CHECK(error_of("{\"schema\": 2, \"gpus\": [], \"nics\": []}") ==
        "r.json:1: expected schema 1 (what this version writes and reads) in /schema, found 2");
  CHECK(error_of("{\"schema\": 1, \"nics\": [],\n \"gpus\": [\n  {\"pci_bus_id\": \"0000:01:00.0\",\n"
                 "   \"sm\": \"ninety\"}]}") ==
        "r.json:4: expected an integer in /gpus/0/sm, found \"ninety\"");
  CHECK(error_of("{\"schema\": 1, \"nics\": [], \"gpus\": [{\"pci_bus_id\": \"zz\"}]}") ==
        "r.json:1: expected a PCI bus id like 0000:1b:00.0 in /gpus/0/pci_bus_id, found \"zz\"");
  CHECK(
      error_of("{\"schema\": 1, \"gpus\": [], \"nics\": [{\"name\": \"mlx5_0\",\n \"ports\": [{\"port\": 1,\n"
               "  \"counters\": {\"symbol_error\": -3}}]}]}") ==
      "r.json:3: expected a number from 0 to 18446744073709551615 in /nics/0/ports/0/counters/symbol_error, "
      "found "
      "-3");
  CHECK(
      error_of(
          "{\"schema\": 1, \"gpus\": [{\"pci_bus_id\": \"0000:01:00.0\", \"health\": {\"pcie_replay\": 4}}],"
          " \"nics\": []}") == "r.json:1: expected an object in /gpus/0/health/pcie_replay, found 4");
}
