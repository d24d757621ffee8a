// nccl-autotune explain: what a profile decides for one communicator at every size, as the built plugin
// decides it when NCCL calls it. Wiring only: the work is in explain/.
#include <cstdio>
#include <iostream>

#include "calibrate/shapes.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "common/install_paths.hpp"
#include "explain/explain.hpp"
#include "explain/explain_layout.hpp"
#include "explain/explain_output.hpp"
#include "profiles/store.hpp"

namespace autotune::cli {
namespace {

std::string profile_path(const po::variables_map& vm) {
  if (vm.count("profile") && vm.count("cluster"))
    throw InputError("<arguments>", 0, "give --profile or --cluster, not both");
  if (vm.count("profile")) return vm["profile"].as<std::string>();
  if (!vm.count("cluster"))
    throw InputError("<arguments>", 0,
                     "--profile FILE or --cluster NAME: expected the profile to explain; found neither");
  const std::string name = vm["cluster"].as<std::string>();
  profiles::Store store(vm.count("store") ? std::filesystem::path(vm["store"].as<std::string>())
                                          : profiles::Store::default_dir());
  auto found = store.find_by_name(name);
  if (found.empty())
    throw InputError("<arguments>", 0,
                     "--cluster: expected a cluster name in the store " + store.dir().string() +
                         "; found \"" + name + "\"");
  return found.front().file.string();
}

uint64_t size_option(const po::variables_map& vm, const char* name) {
  const std::string text = vm[name].as<std::string>();
  auto v = parse_byte_size(text);
  if (!v)
    throw InputError("<arguments>", 0,
                     std::string("--") + name + ": expected a size such as 16G; found \"" + text + "\"");
  return *v;
}

// Every kind of communicator of a layout on o.nodes nodes (GPUs per node: given, else the profile's).
int explain_job(const explain::ExplainOptions& o, const std::string& parallelism, int gpus_per_node,
                const std::string& format) {
  const auto layout = calibrate::parse_parallelism(parallelism);
  if (gpus_per_node == 0) gpus_per_node = explain::layout_gpus_per_node(o);
  if (o.nodes < 1 || gpus_per_node < 1)
    throw InputError("<arguments>", 0,
                     "--nodes and --gpus-per-node: expected counts >= 1; found " + std::to_string(o.nodes) +
                         " and " + std::to_string(gpus_per_node));
  const profiles::JobLayout job{parallelism, calibrate::layout_groups(layout, {o.nodes, gpus_per_node})};
  const auto e = explain::explain_layout(o, job, o.nodes, gpus_per_node);
  std::cout << (format == "json" ? explain::format_layout_json(e) : explain::format_layout_text(e));
  std::cout.flush();
  return kExitOk;
}

}  // namespace

int cmd_explain(const Args& args) {
  CommandSpec spec;
  spec.usage =
      "nccl-autotune explain [--profile FILE | --cluster NAME] --nodes N (--ranks R | --parallelism LAYOUT "
      "[--gpus-per-node G]) [--collective LIST] "
      "[--format text|json] [--example NAME | --topology FILE] [--abi V] [--pipe-ops N] [--reg-buff 0|1] "
      "[--max-bytes SIZE]";
  spec.description =
      "Loads the built tuner plugin as NCCL loads it, gives it the profile, and calls it as NCCL does for a\n"
      "communicator of N nodes x R ranks at every size from 0 to --max-bytes (16G): prints, per collective,\n"
      "the exact byte ranges where the decision stays the same and what each gets (algorithm/protocol,\n"
      "channels, chunk size). Where no rule applies the choice shown is NCCL's own, from the simulator's "
      "model\n"
      "of NCCL's cost model (labelled modelled) for the node the profile's [cluster] names, or --example /\n"
      "--topology. --abi looks up one tuner struct version (2..7) instead of NCCL 2.32.6's order (v7 "
      "first).\n"
      "--parallelism tp=8,pp=4,dp=4 (as tune takes it) explains every kind of communicator a job of that "
      "layout\n"
      "creates on --nodes nodes at once, each with the operations it runs; point-to-point operations "
      "(pipeline\n"
      "send/recv, expert all-to-all) get no per-call rule: only process-wide settings steer them.";
  int nodes = 0, ranks = 0, pipe_ops = 1, reg_buff = 0, abi = 0, gpus_per_node = 0;
  std::string format = "text", collectives, example, topology_file, parallelism;
  spec.options.add_options()("profile", po::value<std::string>(),
                             "profile file (TOML, or NCCL's example CSV)")(
      "cluster", po::value<std::string>(), "the store's newest profile for this cluster name")(
      "store", po::value<std::string>(),
      "profile store directory (default: $NCCL_AUTOTUNE_STORE, XDG data dir)")(
      "nodes", po::value(&nodes)->required(), "nodes in the communicator")(
      "ranks", po::value(&ranks), "ranks in the communicator (a multiple of --nodes)")(
      "parallelism", po::value(&parallelism),
      "every communicator of this layout: tp=8,pp=4,dp=4, hsdp=8, fsdp")(
      "gpus-per-node", po::value(&gpus_per_node),
      "with --parallelism: GPUs per node (default: the profile's)")(
      "collective", po::value(&collectives), "comma list (default: all five)")("format", po::value(&format),
                                                                               "text or json")(
      "example", po::value(&example), "model this bundled node (h100-8x, h100-8x-2nic, a100-pcie-8x)")(
      "topology", po::value(&topology_file), "model this probed node (hwloc or NCCL topology XML)")(
      "abi", po::value(&abi), "look up this tuner struct version alone (2..7)")(
      "pipe-ops", po::value(&pipe_ops), "numPipeOps for every call (default 1)")(
      "reg-buff", po::value(&reg_buff), "regBuff for every call: 0 or 1 (default 0)")(
      "max-bytes", po::value<std::string>()->default_value("16G"), "largest size to explain");
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (format != "text" && format != "json")
    throw InputError("<arguments>", 0, "--format: expected text|json; found \"" + format + "\"");

  explain::ExplainOptions o;
  o.profile_path = profile_path(*vm);
  o.plugin_path = find_plugin().string();
  o.nodes = nodes;
  o.ranks = ranks;
  if (vm->count("collective")) o.collectives = parse_collective_list(collectives, "--collective");
  if (!example.empty()) o.example = example;
  if (!topology_file.empty()) o.topology_file = topology_file;
  if (vm->count("abi")) o.abi = abi;
  o.pipe_ops = pipe_ops;
  o.reg_buff = reg_buff;
  o.max_bytes = size_option(*vm, "max-bytes");
  if (!parallelism.empty()) {
    if (vm->count("ranks"))
      throw InputError("<arguments>", 0, "expected --ranks or --parallelism, found both");
    return explain_job(o, parallelism, vm->count("gpus-per-node") ? gpus_per_node : 0, format);
  }
  if (!vm->count("ranks"))
    throw InputError(
        "<arguments>", 0,
        "--ranks R or --parallelism LAYOUT: expected the communicator(s) to explain; found neither");
  const explain::Explanation e = explain::explain(o);
  std::cout << (format == "json" ? explain::format_json(e) : explain::format_text(e));
  std::cout.flush();
  return kExitOk;
}

}  // namespace autotune::cli
