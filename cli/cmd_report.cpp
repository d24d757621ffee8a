// nccl-autotune report JOURNAL_OR_PROFILE -o report.html : the calibration as one self-contained HTML page.
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "report/report_html.hpp"
#include "search/journal.hpp"
#include "topology/reader.hpp"

namespace autotune::cli {

namespace fs = std::filesystem;

namespace {
bool looks_like_profile(const fs::path& p) {
  return p.extension() == ".toml";
}

}  // namespace

int cmd_report(const Args& args) {
  CommandSpec spec;
  spec.usage = "nccl-autotune report JOURNAL_OR_PROFILE -o FILE.html [--profile FILE] [--probe-summary FILE]";
  spec.description =
      "Renders a calibration as one self-contained HTML file (inline SVG charts, no scripts, nothing "
      "fetched):\n"
      "the cluster and provenance, per collective and scale the bus bandwidth of every candidate against "
      "message\n"
      "size with NCCL's default and the rule ranges, the speedup over the default, the rule table with gains "
      "and\n"
      "evidence, failed candidates and the process-wide settings compared. Given a profile (.toml), its "
      "journal\n"
      "is found next to it (<name>.journal.jsonl); without one the report holds the rule table alone. Given "
      "a\n"
      "journal without --profile, rules are derived from it with the default threshold.";
  std::string input, output, profile_path, probe_path;
  spec.options.add_options()                                                               //
      ("input", po::value(&input), "journal (.jsonl) or profile (.toml)")                  //
      ("output,o", po::value(&output), "HTML file to write")                               //
      ("profile", po::value(&profile_path), "profile whose rules to show with a journal")  //
      ("probe-summary", po::value(&probe_path), "text file with `nccl-autotune probe` output to include");
  spec.positional.add("input", 1);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (input.empty())
    throw InputError("<arguments>", 0, "expected a journal or profile (usage: " + spec.usage + ")");
  if (output.empty()) throw InputError("<arguments>", 0, "expected -o FILE.html (usage: " + spec.usage + ")");

  search::JournalContents journal;
  std::optional<profiles::Profile> profile;
  fs::path in(input);
  if (looks_like_profile(in)) {
    if (!profile_path.empty())
      throw InputError("<arguments>", 0, "--profile is for a journal input; the input is already a profile");
    profile = profiles::read_profile(in);
    fs::path j = profiles::Store::journal_beside(in);
    if (fs::exists(j)) {
      journal = search::load_journal(j);
    } else {
      std::cerr << "note: no journal next to the profile (" << j.string()
                << "): the report holds the rules alone\n";
    }
  } else {
    journal = search::load_journal(in);
    if (!profile_path.empty()) profile = profiles::read_profile(profile_path);
  }
  for (const auto& line : journal.skipped) std::cerr << "warning: " << line << "\n";
  std::string probe;
  if (!probe_path.empty()) probe = read_file(probe_path, topology::kTopologyInput);
  report::write_report(output, journal, profile, probe);
  std::cout << "wrote " << output << " (" << journal.records.size() << " measurements"
            << (profile ? ", " + std::to_string(profile->rules.size()) + " rules from the profile" : "")
            << ")\n";
  return kExitOk;
}

}  // namespace autotune::cli
