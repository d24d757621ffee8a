// nccl-autotune probe: describe this node, a recorded topology file, a recorded sysfs tree or a bundled
// example.

#include <cstdio>
#include <iostream>

#include "autotune/version.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "nccl/version.hpp"
#include "common/input_error.hpp"
#include "topology/analysis.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/output.hpp"
#include "topology/reader.hpp"

namespace autotune::cli {

int cmd_probe(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune probe [--input FILE | --sysfs-root DIR | --example NAME] [--format text|json|nccl-xml]";
  spec.description =
      "Reads the live node (or a recorded hwloc/NCCL topology XML, a recorded sysfs tree, or a bundled "
      "example) and "
      "prints its GPUs, NICs, GPU-NIC paths, NVLS/CollNet/GDR evidence, health findings and fingerprint. "
      "Sources "
      "that are missing are reported with the reason. See docs/probe.md.";
  spec.options.add_options()("input", po::value<std::string>(), "hwloc XML or NCCL topology XML file")(
      "sysfs-root", po::value<std::string>(), "a recorded sysfs tree (its top folder or its sys/ folder)")(
      "example", po::value<std::string>(), "a bundled example node (see --list-examples)")(
      "list-examples", "print the bundled example names")(
      "format", po::value<std::string>()->default_value("text"), "text, json or nccl-xml");
  const auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (vm->count("list-examples")) {
    for (const auto& n : topology::example_names()) std::cout << n << "\n";
    return kExitOk;
  }
  const std::string format = (*vm)["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "nccl-xml")
    throw InputError("<arguments>", 0, "expected --format text, json or nccl-xml, found \"" + format + "\"");
  if (vm->count("input") + vm->count("sysfs-root") + vm->count("example") > 1)
    throw InputError("<arguments>", 0, "expected at most one of --input, --sysfs-root, --example");

  topology::Topology topo;
  if (vm->count("input")) {
    topo = topology::read_topology_file((*vm)["input"].as<std::string>());
  } else if (vm->count("example")) {
    topo = topology::load_example((*vm)["example"].as<std::string>());
  } else {
    topology::LiveOptions options;
    if (vm->count("sysfs-root")) options.sysfs_root = (*vm)["sysfs-root"].as<std::string>();
    topo = topology::probe_live(options);
  }
  if (format == "nccl-xml") {
    std::cout << topology::to_nccl_xml(topo);
    return kExitOk;
  }
  const auto built = nccl::Version::from_code(kBuiltNcclVersion);
  const int nccl = built ? built->major_minor() : 0;
  const topology::Analysis analysis = topology::analyze(topo);
  const topology::ProbeReport report{topo, analysis, topology::fingerprint(topo, nccl)};
  std::cout << (format == "json" ? topology::to_json(report) : topology::to_text(report));
  return kExitOk;
}

}  // namespace autotune::cli
