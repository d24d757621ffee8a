// nccl-autotune journal check JOURNAL... : whether a calibration journal reads whole, every bad line named.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/input_error.hpp"
#include "search/journal.hpp"

namespace autotune::cli {

int cmd_journal(const Args& args) {
  CommandSpec spec;
  spec.usage = "nccl-autotune journal check JOURNAL...";
  spec.description =
      "Reads each journal as tune --resume, --from-journal, report and learn do, and names every line they\n"
      "skip (not JSON, a field missing or of the wrong type, a record no calibration can make: a scale\n"
      "outside 1 <= nodes <= ranks, a time that is not a finite number, ...). Exit 0 when every line reads,\n"
      "2 when any line is skipped or a file is not a journal.";
  std::string action;
  std::vector<std::string> files;
  spec.options.add_options()("action", po::value(&action), "check")(
      "journal", po::value(&files)->multitoken(), "journal files (.jsonl)");
  spec.positional.add("action", 1).add("journal", -1);
  auto vm = parse_command_line(spec, args);
  if (!vm) return kExitOk;
  if (action != "check")
    throw InputError("<arguments>", 0,
                     "expected 'check' (usage: " + spec.usage + "); found '" + action + "'");
  if (files.empty()) throw InputError("<arguments>", 0, "expected a journal (usage: " + spec.usage + ")");
  int status = kExitOk;
  for (const auto& file : files) {
    const search::JournalContents j = search::load_journal(file);
    for (const auto& line : j.skipped) std::cout << line << "\n";
    std::cout << file << ": " << (j.header ? "header, " : "no header, ") << j.records.size()
              << " measurements, " << j.job_events.size() << " job events, " << j.skipped.size()
              << " bad lines skipped\n";
    if (!j.skipped.empty()) status = kExitBadInput;
  }
  return status;
}

}  // namespace autotune::cli
