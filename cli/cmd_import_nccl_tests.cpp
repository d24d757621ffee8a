// nccl-autotune import-nccl-tests LOG... : nccl-tests output appended to a journal as imported measurements.
#include <filesystem>
#include <iostream>

#include "autotune/version.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/input_error.hpp"
#include "common/run_lock.hpp"
#include "common/utc_time.hpp"
#include "nccl/version.hpp"
#include "nccl_tests/import_nccl_tests.hpp"
#include "profiles/store.hpp"
#include "search/journal.hpp"

namespace autotune::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> logs;
  std::string journal, store, cluster, algo, proto, collective, fingerprint;
  int channels = 0, nodes = 0, ranks = 0;
};

void describe_import(CommandSpec& spec, ImportArgs& a) {
  spec.usage =
      "nccl-autotune import-nccl-tests LOG... (--journal FILE | --store DIR --cluster NAME) "
      "[--algo A --proto P [--channels N] | --default] [--nodes N] [--ranks R] [--collective C]";
  spec.description =
      "Reads nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf,\n"
      "reduce_perf, and the point-to-point alltoall_perf, sendrecv_perf, gather_perf, scatter_perf), as "
      "text\n"
      "of any version from 2.0 to 2.19 or as -J JSON, one or several tests per file, and the table\n"
      "`nccl-autotune bench` prints; appends every complete row to a journal as a measurement with source\n"
      "\"imported\". Point-to-point tests are kept as measurements of their operation: nothing was forced\n"
      "for them and no rule comes of them (NCCL's tuner never sees them). Every test not imported is named "
      "on\n"
      "stderr with its reason. What the log does not say comes from the options: the algorithm and protocol\n"
      "it was forced to (NCCL_ALGO/NCCL_PROTO lines in the log say it too), or --default when NCCL chose;\n"
      "the rank and node counts of a table printed without its header. Rows with wrong results are kept as\n"
      "wrong_result and never become rules.";
  spec.options.add_options()                                                                            //
      ("log", po::value(&a.logs)->multitoken(), "nccl-tests output file(s)")                            //
      ("journal", po::value(&a.journal), "journal file to create or append to")                         //
      ("store", po::value(&a.store), "profile store: the journal goes beside NAME's profile there")     //
      ("cluster", po::value(&a.cluster), "cluster name (with --store; also written in a new journal)")  //
      ("algo", po::value(&a.algo), "algorithm the logs were forced to (NCCL_ALGO)")                     //
      ("proto", po::value(&a.proto), "protocol the logs were forced to (NCCL_PROTO)")                   //
      ("channels", po::value(&a.channels), "channel count the logs were forced to (0 = NCCL decided)")  //
      ("default", "the logs ran NCCL's own choice (the baseline rules are measured against)")           //
      ("nodes", po::value(&a.nodes), "node count, when the log does not show it")                       //
      ("ranks", po::value(&a.ranks), "rank count, when the log does not show it (a table alone)")       //
      ("collective", po::value(&a.collective), "the collective, when neither log nor file name says")   //
      ("fingerprint", po::value(&a.fingerprint), "topology fingerprint for a new journal");
  spec.positional.add("log", -1);
}

// Every option checked before a log is read.
nccl_tests::ImportOptions import_options(const ImportArgs& a, const po::variables_map& vm, const Args& args) {
  nccl_tests::ImportOptions options;
  options.as_default = vm.count("default") > 0;
  if (options.as_default && (!a.algo.empty() || !a.proto.empty() || a.channels != 0))
    throw InputError("<arguments>", 0,
                     "--default means nothing was forced: it excludes --algo, --proto, --channels");
  if (!a.algo.empty() && !(options.algorithm = nccl::parse_algorithm(a.algo)))
    throw InputError("<arguments>", 0,
                     "expected an algorithm for --algo (ring, tree, nvls, ...), found '" + a.algo + "'");
  if (!a.proto.empty() && !(options.protocol = nccl::parse_protocol(a.proto)))
    throw InputError("<arguments>", 0,
                     "expected a protocol for --proto (ll, ll128, simple), found '" + a.proto + "'");
  if (a.channels < 0 || a.channels > 64)
    throw InputError("<arguments>", 0,
                     "expected --channels between 0 and 64, found " + std::to_string(a.channels));
  options.channels = a.channels;
  if (vm.count("nodes") && a.nodes < 1)
    throw InputError("<arguments>", 0, "expected --nodes of at least 1, found " + std::to_string(a.nodes));
  if (vm.count("nodes")) options.nodes = a.nodes;
  if (vm.count("ranks") && a.ranks < 1)
    throw InputError("<arguments>", 0, "expected --ranks of at least 1, found " + std::to_string(a.ranks));
  if (vm.count("ranks")) options.ranks = a.ranks;
  if (a.journal.empty() == a.store.empty())
    throw InputError("<arguments>", 0,
                     "expected exactly one of --journal FILE or --store DIR --cluster NAME");
  if (!a.store.empty() && a.cluster.empty())
    throw InputError("<arguments>", 0, "--store needs --cluster NAME (the journal's name in the store)");
  options.cluster = a.cluster;
  options.fingerprint = a.fingerprint;
  options.time = utc_timestamp_now();
  options.command = "nccl-autotune import-nccl-tests";
  for (const auto& arg : args) options.command += " " + arg;
  return options;
}

// Where `tune --resume` and `report` look: beside the profile of this cluster and NCCL version.
std::filesystem::path journal_for(const ImportArgs& a, const nccl_tests::ImportResult& result) {
  if (a.store.empty()) return a.journal;
  std::string version = result.header.nccl_version;
  if (version.empty())
    if (auto built = nccl::Version::from_code(kBuiltNcclVersion)) version = built->text();
  if (version.empty())
    throw InputError("<arguments>", 0, "--store: expected the logs to say which NCCL ran, found no version");
  return profiles::Store(a.store).journal_path_for(a.cluster, version);
}

// Appends to the journal (a new one gets the header); a file that is not a journal is refused first.
void append(const std::filesystem::path& journal_path, nccl_tests::ImportResult& result) {
  const RunLock lock = search::lock_journal(journal_path, "an import into " + journal_path.string());
  const bool fresh = !std::filesystem::exists(journal_path) || std::filesystem::file_size(journal_path) == 0;
  if (!fresh) {
    auto existing = search::load_journal(journal_path);
    for (const auto& line : existing.skipped) std::cerr << "warning: " << line << "\n";
    if (existing.header && existing.header->source != result.header.source)
      std::cerr << "warning: " << journal_path.string() << " holds " << existing.header->source
                << " measurements; these are marked \"" << result.header.source << "\" line by line\n";
  } else if (journal_path.has_parent_path()) {
    std::filesystem::create_directories(journal_path.parent_path());
  }
  result.header.tool_version = kToolVersion;
  search::JournalWriter writer(journal_path);
  if (fresh) writer.write(result.header);
  writer.write(result.records);
}

}  // namespace

int cmd_import_nccl_tests(const Args& args) {
  CommandSpec spec;
  ImportArgs a;
  describe_import(spec, a);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (a.logs.empty())
    throw InputError("<arguments>", 0, "expected at least one nccl-tests log (usage: " + spec.usage + ")");
  const nccl_tests::ImportOptions options = import_options(a, *vm, args);
  std::vector<nccl_tests::NcclTestsFile> parsed;
  std::optional<std::string> coll;
  if (!a.collective.empty()) coll = a.collective;
  for (const auto& path : a.logs) parsed.push_back(nccl_tests::read_nccl_tests_file(path, coll));
  nccl_tests::ImportResult result = nccl_tests::import_nccl_tests(parsed, options);
  for (const auto& n : result.not_imported)
    std::cerr << "not imported: " << n.test << ": " << n.reason << "\n";
  for (const auto& w : result.warnings) std::cerr << "warning: " << w << "\n";
  const std::filesystem::path journal_path = journal_for(a, result);
  append(journal_path, result);
  size_t wrong = 0;
  for (const auto& r : result.records) wrong += r.measurement.outcome != runners::Outcome::ok;
  std::cout << "imported " << result.records.size() << " measurements (" << wrong
            << " with wrong results) from " << result.tests_imported << " of " << result.tests
            << (result.tests == 1 ? " test" : " tests") << " in " << parsed.size()
            << (parsed.size() == 1 ? " file" : " files") << " into " << journal_path.string() << "\n";
  return kExitOk;
}

}  // namespace autotune::cli
