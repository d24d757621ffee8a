// nccl-autotune metrics: the profile store as Prometheus metrics, written atomically in node exporter's
// text-file format. Wiring only: metrics/ collects, common/ writes.
#include <ctime>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "metrics/store_metrics.hpp"
#include "profiles/store.hpp"

namespace autotune::cli {

int cmd_metrics(const Args& args) {
  CommandSpec spec;
  spec.usage = "nccl-autotune metrics [--store DIR] --out DIR/FILE.prom [--window 24h]";
  spec.description =
      "Writes what the profile store holds as Prometheus metrics, in the text format node exporter's\n"
      "text-file collector reads (--collector.textfile.directory): per cluster the profile version in use\n"
      "and its age; per shape, collective and size bucket the bus bandwidth production reached (the jobs'\n"
      "telemetry, believed as learn believes it) and what the profile expected, and the share of calls its\n"
      "rules, exploration and NCCL decided; telemetry awaiting learn; the last verify and health check.\n"
      "The file is replaced atomically (a temporary file in its folder, flushed, renamed). See\n"
      "docs/operations.md for every metric.";
  std::string store, out, window = "24h";
  spec.options.add_options()("store", po::value(&store), "profile store (default: $NCCL_AUTOTUNE_STORE)")(
      "out", po::value(&out), "the .prom file to write, in the text-file collector's folder")(
      "window", po::value(&window)->default_value(window),
      "telemetry learn already folded counts while younger than this");
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (out.empty()) throw InputError("<arguments>", 0, "--out: expected a file DIR/NAME.prom; found none");
  const std::filesystem::path target = out;
  if (target.extension() != ".prom")
    throw InputError(
        "<arguments>", 0,
        "--out: expected a name ending in .prom (the collector reads only those); found '" + out + "'");
  const auto folder = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError("<arguments>", 0,
                     "--out: expected an existing folder; found no folder " + folder.string());
  metrics::MetricsOptions options;
  options.now = static_cast<int64_t>(std::time(nullptr));
  options.window_s = static_cast<int64_t>(parse_duration(window, "--window"));
  const std::filesystem::path dir =
      store.empty() ? profiles::Store::default_dir() : std::filesystem::path(store);
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError("<arguments>", 0,
                     "--store: expected a profile store folder; found none at " + dir.string());
  const metrics::StoreMetrics m = metrics::collect_store_metrics(dir, options);
  for (const auto& w : m.warnings) std::cerr << "warning: " << w << "\n";
  write_file_atomically(target, metrics::format_exposition(m.families));
  return kExitOk;
}

}  // namespace autotune::cli
