// Fuzzes the calibration journal reader: every line goes through parse_journal_line (a journal is read after
// crashes, merges and hand edits), and a line that parses must write back (to_json_line) as a line that
// parses to the same JSON again. Anything but an InputError for a bad line is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/input_error.hpp"
#include "search/journal.hpp"

namespace {

using namespace autotune::search;

std::string write_back(const JournalEntry& entry) {
  if (const auto* h = entry.header()) return to_json_line(*h);
  if (const auto* r = entry.record()) return to_json_line(*r);
  return to_json_line(*entry.job_event());
}

void one_line(std::string_view line, int number) {
  std::optional<JournalEntry> entry;
  try {
    entry = parse_journal_line(line, "fuzz.jsonl", number);
  } catch (const autotune::InputError&) {
    return;
  }
  if (!entry) return;
  const std::string once = write_back(*entry);
  std::optional<JournalEntry> again;
  try {
    again = parse_journal_line(once, "written.jsonl", number);
  } catch (const autotune::InputError& e) {
    std::fprintf(stderr, "a parsed journal line writes back as one that does not parse: %s\n%s\n", e.what(),
                 once.c_str());
    std::abort();
  }
  if (!again || write_back(*again) != once) {
    std::fprintf(stderr, "journal line does not round-trip:\n%s\n", once.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  int number = 1;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    one_line(text.substr(0, end), number++);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return 0;
}
