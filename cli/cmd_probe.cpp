// nccl-autotune probe: describe this node, a recorded topology file, a recorded sysfs tree or a bundled
// example.

#include <cstdio>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/input_error.hpp"
#include "launcher/default_services.hpp"
#include "launcher/fingerprint_explanation.hpp"
#include "launcher/job_nccl.hpp"
#include "profiles/profile_toml.hpp"
#include "topology/analysis.hpp"
#include "topology/dcgm_diag.hpp"
#include "topology/examples.hpp"
#include "topology/fingerprint.hpp"
#include "topology/output.hpp"
#include "topology/reader.hpp"

namespace autotune::cli {

namespace {

void add_probe_options(CommandSpec& spec) {
  spec.options.add_options()("input", po::value<std::string>(),
                             "hwloc XML, NCCL topology XML or probe JSON record (probe --format json)")(
      "sysfs-root", po::value<std::string>(), "a recorded sysfs tree (its top folder or its sys/ folder)")(
      "example", po::value<std::string>(), "a bundled example node (see --list-examples)")(
      "list-examples", "print the bundled example names")(
      "dcgm", po::value<int>()->implicit_value(1),
      "live node: also run DCGM's diagnostics, dcgmi diag -r LEVEL (1 quick .. 4 extended; default 1)")(
      "counter-interval", po::value<int>()->default_value(1000),
      "live node: milliseconds between the two reads of each NVML error counter (0: read once)")(
      "explain-fingerprint", "print only the fingerprint, made for the job's NCCL, and the facts it hashes")(
      "against", po::value<std::string>(),
      "with --explain-fingerprint: a profile (file); say whether it was calibrated for this kind of node and "
      "what differs (exit 1 when it was not)")("format", po::value<std::string>()->default_value("text"),
                                               "text, json or nccl-xml");
}

// Every option checked before the node is read; the live probe's level of DCGM diagnostics (0: none).
int check_probe_options(const po::variables_map& vm) {
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "nccl-xml")
    throw InputError("<arguments>", 0, "expected --format text, json or nccl-xml, found \"" + format + "\"");
  if (vm.count("input") + vm.count("sysfs-root") + vm.count("example") > 1)
    throw InputError("<arguments>", 0, "expected at most one of --input, --sysfs-root, --example");
  if (vm.count("against") && !vm.count("explain-fingerprint"))
    throw InputError("<arguments>", 0, "expected --against with --explain-fingerprint");
  if (vm.count("explain-fingerprint") && format == "nccl-xml")
    throw InputError("<arguments>", 0, "expected --explain-fingerprint with --format text or json");
  const bool live = !vm.count("input") && !vm.count("example") && !vm.count("sysfs-root");
  const int interval = vm["counter-interval"].as<int>();
  if (interval < 0 || interval > 60000)
    throw InputError("<arguments>", 0,
                     "expected --counter-interval 0..60000 ms, found " + std::to_string(interval));
  if (!vm["counter-interval"].defaulted() && !live)
    throw InputError("<arguments>", 0,
                     "expected --counter-interval on the live node only (it times NVML's reads)");
  if (vm.count("dcgm") && !live)
    throw InputError("<arguments>", 0, "expected --dcgm on the live node only (it runs dcgmi here)");
  const int dcgm_level = vm.count("dcgm") ? vm["dcgm"].as<int>() : 0;
  if (vm.count("dcgm") && (dcgm_level < 1 || dcgm_level > 4))
    throw InputError("<arguments>", 0, "expected --dcgm level 1 to 4, found " + std::to_string(dcgm_level));
  return dcgm_level;
}

topology::Topology read_node(const po::variables_map& vm, int dcgm_level) {
  topology::Topology topo;
  if (vm.count("input")) {
    topo = topology::read_topology_file(vm["input"].as<std::string>());
  } else if (vm.count("example")) {
    topo = topology::load_example(vm["example"].as<std::string>());
  } else {
    topology::LiveOptions options;
    if (vm.count("sysfs-root")) options.sysfs_root = vm["sysfs-root"].as<std::string>();
    options.health = true;
    options.counter_interval_ms = vm["counter-interval"].as<int>();
    topo = topology::probe_live(options);
  }
  if (dcgm_level > 0) {
    std::cerr << "probe: running dcgmi diag -r " << dcgm_level << " (level 1 takes about a minute)\n";
    topo.health.dcgm = topology::run_dcgm_diag(*topology::make_command_runner(), dcgm_level);
    if (!topo.health.dcgm->ran) std::cerr << "probe: " << topo.health.dcgm->why << "\n";
  }
  return topo;
}

}  // namespace

int cmd_probe(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune probe [--input FILE | --sysfs-root DIR | --example NAME] [--dcgm [LEVEL]] "
      "[--counter-interval MS] [--explain-fingerprint [--against PROFILE]] [--format text|json|nccl-xml]";
  spec.description =
      "Reads the live node (or a recorded hwloc/NCCL topology XML, a probe JSON record, a recorded sysfs "
      "tree, "
      "or a bundled example) and prints its GPUs, NICs, GPU-NIC paths, NVLS/CollNet/GDR evidence, health "
      "findings (block / warn), the fabric settings it needs and its fingerprint. Sources that are missing "
      "are reported with the reason. See docs/probe.md and docs/health.md.";
  add_probe_options(spec);
  const auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (vm->count("list-examples")) {
    for (const auto& n : topology::example_names()) std::cout << n << "\n";
    return kExitOk;
  }
  const int dcgm_level = check_probe_options(*vm);
  const std::string format = (*vm)["format"].as<std::string>();
  std::optional<profiles::Profile> against;
  if (vm->count("against")) against = profiles::read_profile((*vm)["against"].as<std::string>());
  const topology::Topology topo = read_node(*vm, dcgm_level);
  if (format == "nccl-xml") {
    std::cout << topology::to_nccl_xml(topo);
    return kExitOk;
  }
  // The fingerprint is made for the NCCL the job would load, as the launcher makes it.
  auto e = launcher::explain_fingerprint(topo, launcher::find_job_nccl(launcher::process_environment()),
                                         launcher::built_nccl_major_minor());
  if (vm->count("explain-fingerprint")) {
    if (against) launcher::compare_with(e, *against, (*vm)["against"].as<std::string>());
    std::cout << (format == "json" ? launcher::to_json(e) : launcher::to_text(e));
    return e.against && !e.against->matches ? kExitFailed : kExitOk;
  }
  const topology::ProbeReport report{topo, topology::analyze(topo), e.fingerprint};
  std::cout << (format == "json" ? topology::to_json(report) : topology::to_text(report));
  return kExitOk;
}

}  // namespace autotune::cli
